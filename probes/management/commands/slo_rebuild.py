"""`manage.py slo_rebuild NAME [NAME …]`: recount objectives from the raw rows kept (probes.slos.rebuild), e.g.
after creating one or changing its condition without the admin, or to check the counts."""

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Recount service level objectives, by name, from every raw measurement and missed run kept."

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="+", metavar="NAME", help="an objective's name")

    def handle(self, *args, **opts):
        from probes.models import ServiceLevelObjective
        from probes.slos.rebuild import Superseded, rebuild

        found = dict(ServiceLevelObjective.objects.filter(name__in=opts["names"]).values_list("name", "id"))
        unknown = [name for name in opts["names"] if name not in found]
        if unknown:
            raise CommandError(f"no objective named {', '.join(map(repr, unknown))}")
        for name in opts["names"]:
            try:
                done = rebuild(found[name])
            except Superseded:
                raise CommandError(f"{name!r} changed while it was being counted; run the command again") from None
            rate = done.rows / done.seconds if done.seconds > 0 else 0.0
            self.stdout.write(
                f"{name}: {done.rows} calls and {done.missed} missed runs counted in {done.seconds:.1f} s "
                f"({rate:,.0f} calls/s); exact since {done.exact_since.isoformat()}"
            )
