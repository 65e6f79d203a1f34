"""Seed the regions the project ships workers for.

Existing rows are left alone, so an operator's renames or deactivations
survive; the reverse removes only these slugs.
"""

from django.db import migrations

# slug, name, city, ISO 3166-1 alpha-2, latitude, longitude (city centre)
REGIONS = [
    ("af-lagos", "Lagos, Nigeria", "Lagos", "NG", 6.5244, 3.3792),
    ("af-nairobi", "Nairobi, Kenya", "Nairobi", "KE", -1.2921, 36.8219),
    ("af-johannesburg", "Johannesburg, South Africa", "Johannesburg", "ZA", -26.2041, 28.0473),
    ("af-cairo", "Cairo, Egypt", "Cairo", "EG", 30.0444, 31.2357),
    ("eu-london", "London, United Kingdom", "London", "GB", 51.5074, -0.1278),
    ("eu-frankfurt", "Frankfurt, Germany", "Frankfurt am Main", "DE", 50.1109, 8.6821),
    ("us-ashburn", "Ashburn, Virginia, US", "Ashburn", "US", 39.0438, -77.4874),
    ("us-sanfrancisco", "San Francisco, California, US", "San Francisco", "US", 37.7749, -122.4194),
    ("sa-saopaulo", "São Paulo, Brazil", "São Paulo", "BR", -23.5505, -46.6333),
    ("ap-mumbai", "Mumbai, India", "Mumbai", "IN", 19.0760, 72.8777),
    ("ap-singapore", "Singapore", "Singapore", "SG", 1.3521, 103.8198),
    ("ap-tokyo", "Tokyo, Japan", "Tokyo", "JP", 35.6762, 139.6503),
    ("ap-sydney", "Sydney, Australia", "Sydney", "AU", -33.8688, 151.2093),
    ("me-dubai", "Dubai, United Arab Emirates", "Dubai", "AE", 25.2048, 55.2708),
    ("ap-shanghai", "Shanghai, China", "Shanghai", "CN", 31.2304, 121.4737),
]
SLUGS = [row[0] for row in REGIONS]


def seed(apps, schema_editor):
    Region = apps.get_model("probes", "Region")
    for slug, name, city, country, latitude, longitude in REGIONS:
        Region.objects.get_or_create(
            slug=slug,
            defaults={"name": name, "city": city, "country": country, "latitude": latitude, "longitude": longitude},
        )


def unseed(apps, schema_editor):
    # Regions with measurements are protected by their foreign keys; the
    # reverse then fails loudly rather than dropping history.
    apps.get_model("probes", "Region").objects.filter(slug__in=SLUGS).delete()


class Migration(migrations.Migration):
    dependencies = [("probes", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
