"""A model's config.json in the calculator: the CLI's --config, the API (GET link, POST form, file
and JSON body) and the page (paste, upload, shared link), with its hostile forms refused."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.calculator.config_input import CONFIG_MAX_BYTES, CONFIG_QUERY_MAX_CHARS, compact

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
QWEN3_32B = CONFIGS / "qwen3-32b.json"
SERVING = ["serving", "--gpu", "h100-sxm", "--users", "4", "--context-tokens", "4096"]
SERVING_QUERY = {"gpu": "h100-sxm", "users": "4", "context_tokens": "4096"}

pytestmark = pytest.mark.django_db


def cli_json(*args: str) -> dict:
    out = StringIO()
    call_command("capacity", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def cli_error(*args: str) -> str:
    with pytest.raises(CommandError) as err:
        call_command("capacity", *args, stdout=StringIO())
    assert err.value.returncode == 2
    line = str(err.value)
    assert "\n" not in line and "Traceback" not in line
    return line


# --- the CLI -------------------------------------------------------------------------------------


def test_config_gives_the_catalogue_rows_kv_and_weights() -> None:
    """Qwen3-32B's config.json sizes the same weights, KV bytes per token and vLLM pool as its
    catalogue row (both read from that config.json)."""
    from_config = cli_json(*SERVING, "--config", str(QWEN3_32B))
    from_row = cli_json(*SERVING, "--model", "qwen3-32b")
    # 64 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes
    assert from_config["kv_bytes_per_token"] == from_row["kv_bytes_per_token"] == 262_144
    assert from_config["weights_gb"] == from_row["weights_gb"]
    assert from_config["kv_cache_tokens"] == from_row["kv_cache_tokens"]


def test_a_config_replaces_the_picked_model_and_flags_still_win() -> None:
    picked = cli_json(*SERVING, "--model", "llama-3.1-8b", "--config", str(QWEN3_32B))
    assert picked["kv_bytes_per_token"] == 262_144  # Qwen3-32B's, not Llama-3.1-8B's 131,072
    flagged = cli_json(*SERVING, "--config", str(QWEN3_32B), "--layers", "32")
    assert flagged["kv_bytes_per_token"] == 131_072  # the typed layer count wins


def test_training_reads_the_config_too() -> None:
    args = ["training", "--method", "lora", "--batch-size", "1", "--seq-len", "2048"]
    from_config = cli_json(*args, "--config", str(QWEN3_32B))
    from_row = cli_json(*args, "--model", "qwen3-32b")
    assert from_config["weights_gb"] == pytest.approx(from_row["weights_gb"], rel=0.01)


def test_the_human_summary_names_the_config_model_figures() -> None:
    out = StringIO()
    call_command("capacity", *SERVING, "--config", str(QWEN3_32B), stdout=out)
    text = out.getvalue()
    assert "KV bytes per token: 262144" in text
    assert "Decode per stream, predicted (tokens/s):" in text


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"num_hidden_layers": 64,', "json"),  # cut short
        (b"\xff\xfe\x00garbage", "UTF-8"),
        (b"[1, 2, 3]", ""),
        (b'{"hidden_size": 5120}', "num_hidden_layers"),
        (
            json.dumps({**json.loads(QWEN3_32B.read_text()), "num_hidden_layers": 1e400}).encode(),
            "",
        ),
        (json.dumps({**json.loads(QWEN3_32B.read_text()), "hidden_size": -5120}).encode(), ""),
        (b"[" * 100_000 + b"]" * 100_000, ""),  # nesting bomb
    ],
    ids=["truncated", "not-utf8", "not-an-object", "missing-key", "huge", "negative", "deep"],
)
def test_a_bad_config_file_exits_2_naming_config(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    line = cli_error(*SERVING, "--config", str(path))
    assert line.startswith("--config: ")
    assert why.lower() in line.lower()


def test_missing_unreadable_and_oversized_config_files_exit_2(tmp_path: Path) -> None:
    assert cli_error(*SERVING, "--config", str(tmp_path / "nope.json")).startswith(
        "--config: no such file"
    )
    assert "directory" in cli_error(*SERVING, "--config", str(tmp_path))
    big = tmp_path / "big.json"
    big.write_bytes(b'{"pad": "' + b"x" * CONFIG_MAX_BYTES + b'"}')
    assert "larger than" in cli_error(*SERVING, "--config", str(big))
    locked = tmp_path / "locked.json"
    locked.write_text(QWEN3_32B.read_text())
    locked.chmod(0)
    try:
        if not locked.stat().st_mode & 0o444 and not _can_read(locked):
            assert "cannot read" in cli_error(*SERVING, "--config", str(locked))
    finally:
        locked.chmod(0o644)


def _can_read(path: Path) -> bool:
    try:
        path.read_bytes()
    except OSError:
        return False
    return True  # running as root: permissions do not stop the read


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--intermediate-size", "0"], "--intermediate-size"),
        (["--intermediate-size", "1e400"], "--intermediate-size"),
        (["--intermediate-size", "2.5"], "--intermediate-size"),
        (["--burst-arrivals", "-1"], "--burst-arrivals"),
        (["--burst-arrivals", "9" * 50], "--burst-arrivals"),
        (["--arrival-rate-per-s", "nan"], "--arrival-rate-per-s"),
        (["--arrival-rate-per-s", "1e-10000000"], "--arrival-rate-per-s"),
    ],
)
def test_new_serving_options_exit_2_naming_the_option(args: list[str], option: str) -> None:
    assert cli_error(*SERVING, "--model", "llama-3.1-8b", *args).startswith(f"{option}: ")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--gpu", "no-such-gpu"], "--gpu"),
        (["--model", "no-such-model"], "--model"),
        (["--params-b", "-7"], "--params-b"),
        (["--params-b", "1e999999"], "--params-b"),
    ],
)
def test_new_batch_options_exit_2_naming_the_option(args: list[str], option: str) -> None:
    base = ["batch", "--items", "50000", "--window-hours", "2"]
    assert cli_error(*base, *args).startswith(f"{option}: ")


def test_intermediate_size_changes_the_activation_peak() -> None:
    base = [*SERVING, "--model", "llama-3.1-8b"]
    narrow = cli_json(*base, "--intermediate-size", "1024")
    wide = cli_json(*base, "--intermediate-size", "57344")
    assert narrow["overhead_gb"] < wide["overhead_gb"]
    assert "intermediate_size" not in narrow["missing_assumptions"]


# --- the API -------------------------------------------------------------------------------------


def test_api_get_with_a_config_agrees_with_the_cli(client: Client) -> None:
    expected = cli_json(*SERVING, "--config", str(QWEN3_32B))
    minified = json.dumps(json.loads(QWEN3_32B.read_text()), separators=(",", ":"))
    for value in (minified, compact(QWEN3_32B.read_text())):
        response = client.get(reverse("planner:api_serving"), {**SERVING_QUERY, "config": value})
        assert response.status_code == 200, response.content
        assert response.json() == expected


def test_api_post_takes_the_config_as_form_file_and_json(client: Client) -> None:
    expected = cli_json(*SERVING, "--config", str(QWEN3_32B))
    url = reverse("planner:api_serving")
    text = QWEN3_32B.read_text()
    as_form = client.post(url, {**SERVING_QUERY, "config": text})
    upload = SimpleUploadedFile("config.json", text.encode(), content_type="application/json")
    as_file = client.post(url, {**SERVING_QUERY, "config": upload})
    as_object = client.post(
        url,
        {**SERVING_QUERY, "users": 4, "config": json.loads(text)},
        content_type="application/json",
    )
    as_text = client.post(url, {**SERVING_QUERY, "config": text}, content_type="application/json")
    for response in (as_form, as_file, as_object, as_text):
        assert response.status_code == 200, response.content
        assert response.json() == expected


def test_api_post_needs_no_csrf_token() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        reverse("planner:api_serving"),
        {**SERVING_QUERY, "config": QWEN3_32B.read_text()},
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("body", "content_type", "field"),
    [
        ("not json", "application/json", "body"),
        ("[1, 2]", "application/json", "body"),
        ('{"users": [1, 2]}', "application/json", "users"),
        ('{"config": 42}', "application/json", "config"),
        ('{"config": {"hidden_size": 5120}}', "application/json", "config"),
        ('{"users": 1e400}', "application/json", "users"),
        ('{"config": "' + "x" * (CONFIG_MAX_BYTES + 10) + '"}', "application/json", "config"),
    ],
)
def test_api_post_refuses_what_it_cannot_read_naming_it(
    client: Client, body: str, content_type: str, field: str
) -> None:
    response = client.post(reverse("planner:api_serving"), body, content_type=content_type)
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_api_refuses_a_config_upload_over_the_limit(client: Client) -> None:
    upload = SimpleUploadedFile("config.json", b" " * (CONFIG_MAX_BYTES + 1))
    response = client.post(reverse("planner:api_serving"), {**SERVING_QUERY, "config": upload})
    assert response.status_code == 400
    assert "larger than" in response.json()["errors"]["config"][0]


def test_api_get_refuses_a_config_too_long_for_a_link(client: Client) -> None:
    config = json.loads(QWEN3_32B.read_text())
    config["padding"] = "x" * CONFIG_QUERY_MAX_CHARS
    response = client.get(
        reverse("planner:api_serving"), {**SERVING_QUERY, "config": json.dumps(config)}
    )
    assert response.status_code == 400
    assert "POST" in response.json()["errors"]["config"][0]


@pytest.mark.parametrize(
    "value",
    ["z.", "z.!!!!", "z." + "A" * 200, compact('{"a": 1}')[:-3], "not json at all", "{" * 3000],
)
def test_api_refuses_damaged_or_unreadable_configs(client: Client, value: str) -> None:
    response = client.get(reverse("planner:api_serving"), {**SERVING_QUERY, "config": value})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["config"]


def test_a_compact_link_cannot_inflate_past_the_limit(client: Client) -> None:
    import base64
    import zlib

    bomb = zlib.compress(b'{"a":"' + b"x" * (4 * CONFIG_MAX_BYTES) + b'"}', 9)
    value = "z." + base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(value) < CONFIG_QUERY_MAX_CHARS
    response = client.get(reverse("planner:api_serving"), {**SERVING_QUERY, "config": value})
    assert response.status_code == 400
    assert "larger than" in response.json()["errors"]["config"][0]


# --- the page ------------------------------------------------------------------------------------


def test_the_page_posts_a_pasted_config_and_pushes_a_short_link(client: Client) -> None:
    text = QWEN3_32B.read_text()
    response = client.post(
        reverse("planner:calculator"),
        {"estimate": "serving", **SERVING_QUERY, "config": text},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-testid="config-model"' in body and "Qwen3" in body
    pushed = response.headers["HX-Push-Url"]
    as_typed = quote(json.dumps(json.loads(text), separators=(",", ":")))
    assert len(pushed) < len(as_typed)  # compact: 584 characters against 849
    config = parse_qs(urlsplit(pushed).query)["config"][0]
    assert config.startswith("z.")
    # The pushed link opens the same calculation, the config shown as JSON in its box.
    page = client.get(pushed).content.decode()
    assert re.search(r'data-testid="max-users">\d+<', page)
    max_users = re.search(r'data-testid="max-users">(\d+)<', body)
    assert max_users is not None and f'data-testid="max-users">{max_users[1]}<' in page
    assert "&quot;num_hidden_layers&quot;: 64" in page


def test_the_page_without_javascript_uploads_the_file_and_redirects_to_the_link(
    client: Client,
) -> None:
    upload = SimpleUploadedFile("config.json", QWEN3_32B.read_bytes())
    response = client.post(
        reverse("planner:calculator"),
        {"estimate": "serving", **SERVING_QUERY, "config": "", "config_file": upload},
    )
    assert response.status_code == 302
    assert "config=z." in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="config-model"' in page


def test_the_page_shows_a_bad_config_at_its_field(client: Client) -> None:
    response = client.post(
        reverse("planner:calculator"),
        {"estimate": "serving", **SERVING_QUERY, "config": '{"hidden_size": 5120}'},
        headers={"HX-Request": "true"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'id="err-config"[^>]*>[^<]*num_hidden_layers', body)
    assert 'data-testid="max-users"' not in body


QWEN3_32B_CONFIG = json.loads(QWEN3_32B.read_text())
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    config=st.one_of(
        st.text(max_size=200),
        JSON_VALUES.map(json.dumps),
        st.tuples(st.sampled_from(sorted(QWEN3_32B_CONFIG)), JSON_VALUES).map(
            lambda kv: json.dumps({**QWEN3_32B_CONFIG, kv[0]: kv[1]})
        ),
    ),
    post=st.booleans(),
)
def test_any_config_answers_200_or_400_naming_its_field(
    client: Client, config: str, post: bool
) -> None:
    url = reverse("planner:api_serving")
    send = client.post if post else client.get
    response = send(url, {**SERVING_QUERY, "config": config})
    assert response.status_code in {200, 400}, config
    if response.status_code == 400 and config.strip():  # empty: no model at all (model_gb)
        assert set(response.json()["errors"]) <= {"config", "context_tokens", "users"}, config


def test_the_page_form_posts_with_its_csrf_token_and_is_refused_without() -> None:
    """Without JavaScript the form posts itself (with the page's token); htmx sends the token in
    its header. Either way a POST without one is refused."""
    client = Client(enforce_csrf_checks=True)
    page = client.get(reverse("planner:calculator")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)" form="calc-form"', page)
    assert token is not None
    inputs = {"estimate": "serving", **SERVING_QUERY, "model": "llama-3.1-8b"}
    refused = client.post(reverse("planner:calculator"), inputs)
    assert refused.status_code == 403
    posted = client.post(reverse("planner:calculator"), {**inputs, "csrfmiddlewaretoken": token[1]})
    assert posted.status_code == 302 and "model=llama-3.1-8b" in posted["Location"]
    by_htmx = client.post(
        reverse("planner:calculator"),
        inputs,
        headers={"HX-Request": "true", "X-CSRFToken": token[1]},
    )
    assert by_htmx.status_code == 200 and "model=llama-3.1-8b" in by_htmx["HX-Push-Url"]


def test_a_workload_card_keeps_the_config_it_was_saved_with(learner) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.models import WorkloadCard

    client = Client()
    client.force_login(learner)
    query = "estimate=serving&gpu=h100-sxm&users=4&config=" + compact(QWEN3_32B.read_text())
    response = client.post(reverse("planner:card_create"), {"name": "Qwen3 chat", "query": query})
    assert response.status_code == 302
    card = WorkloadCard.objects.get(owner=learner, name="Qwen3 chat")
    assert card.result["kv_bytes_per_token"] == 262_144
    assert card.inputs["config"].startswith("z.")
    page = client.get(reverse("planner:calculator") + "?" + query).content.decode()
    assert 'data-testid="config-model"' in page
