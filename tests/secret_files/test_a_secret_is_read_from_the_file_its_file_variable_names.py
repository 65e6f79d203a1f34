"""NAME_FILE names the file holding NAME (Docker and Kubernetes secrets): its contents are the value, one final
line ending dropped; a name set both ways, an unreadable or empty file refuse with the variable and the path and
never the contents; *_FILE variables that are not ours are left alone."""

from __future__ import annotations

import pytest

from probes.conf.secretfiles import SecretFileError, read


@pytest.fixture
def secret(tmp_path):
    def write(text: str, name: str = "secret") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def test_the_files_contents_are_the_value_without_the_final_line_ending(secret):
    env = {
        "SECRET_KEY_FILE": secret("k3y-from-a-file\n", "key"),
        "DATABASE_URL_FILE": secret("postgres://atlas:pw@db/atlas\r\n", "db"),
        "LATENCY_REGION_KEY_AF_LAGOS_FILE": secret("la1.region-key", "region"),
    }
    assert read(env) == {
        "SECRET_KEY": "k3y-from-a-file",
        "DATABASE_URL": "postgres://atlas:pw@db/atlas",
        "LATENCY_REGION_KEY_AF_LAGOS": "la1.region-key",
    }


def test_file_variables_that_are_not_our_secrets_are_left_alone(secret):
    path = secret("whatever\n")
    # Not secrets of ours: a CA bundle's path, an undeclared name, a setting that is no secret.
    env = {"SSL_CERT_FILE": path, "SOMETHING_FILE": path, "ALLOWED_HOSTS_FILE": path}
    assert read(env) == {}
    assert read({"OPENAI_API_KEY_FILE": path}, lambda name: name == "OPENAI_API_KEY") == {"OPENAI_API_KEY": "whatever"}


def test_a_secret_given_both_ways_is_refused_unless_both_say_the_same(secret):
    path = secret("from-the-file\n")
    with pytest.raises(SecretFileError, match="SECRET_KEY and SECRET_KEY_FILE are both set") as refused:
        read({"SECRET_KEY": "from-the-variable", "SECRET_KEY_FILE": path})
    assert "from-the" not in str(refused.value)
    # A second read of an environment this module filled.
    assert read({"SECRET_KEY": "from-the-file", "SECRET_KEY_FILE": path}) == {"SECRET_KEY": "from-the-file"}


@pytest.mark.parametrize(
    ("contents", "problem"),
    [(None, r"SECRET_KEY_FILE=\S+ cannot be read \(No such file or directory\)"), ("\n", "is empty")],
)
def test_a_file_that_cannot_give_a_value_is_refused_naming_the_variable(secret, tmp_path, contents, problem):
    path = str(tmp_path / "missing") if contents is None else secret(contents)
    with pytest.raises(SecretFileError, match=problem):
        read({"SECRET_KEY_FILE": path})
    with pytest.raises(SecretFileError, match="SECRET_KEY_FILE is empty: give the path"):
        read({"SECRET_KEY_FILE": " "})
