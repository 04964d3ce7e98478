"""Workload cards: save the calculation, list, compare, delete, examples, and who may see what."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from planner.cards.services import workload_card_create, workload_cards_seed_examples
from planner.models import WorkloadCard
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

BASELINE_QUERY = (
    "estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6&users=20"
)


def logged_in(client: Client, user: object) -> Client:
    assert client.login(email=user.email, password=PASSWORD)  # type: ignore[attr-defined]
    return client


def make_card(owner: object, name: str = "Chat") -> WorkloadCard:
    return workload_card_create(
        owner=owner,  # type: ignore[arg-type]
        name=name,
        inputs={
            "estimate": "serving",
            "gpu_memory_gb": "24",
            "model_gb": "14",
            "overhead_gb": "3",
            "kv_per_user_gb": "0.6",
            "users": "20",
        },
        result={
            "estimate": "serving",
            "max_active_users": 11,
            "users": 20,
            "fits": False,
            "warnings": [],
        },
    )


def test_save_recomputes_the_result_server_side(client: Client, learner: object) -> None:
    """The card stores the engine's JSON for the posted inputs, not numbers the browser sent."""
    logged_in(client, learner)
    response = client.post(
        reverse("planner:card_create"),
        {
            "name": "Chat on a 24 GB card",
            "query": BASELINE_QUERY,
            "latency_target_ms": "2000",
            "max_active_users": "999",
        },
    )
    assert response.status_code == 302
    card = WorkloadCard.objects.get(owner=learner)
    assert card.kind == WorkloadCard.Kind.INTERACTIVE_SERVING
    assert card.result["max_active_users"] == 11
    assert card.result["available_for_cache_gb"] == 7.0
    assert card.concurrency == 20 and card.latency_target_ms == 2000
    assert card.inputs["kv_per_user_gb"] == "0.6"
    assert card.is_example is False


def test_learner_cannot_publish_an_example(client: Client, learner: object) -> None:
    logged_in(client, learner)
    client.post(
        reverse("planner:card_create"),
        {"name": "Mine", "query": BASELINE_QUERY, "is_example": "on"},
    )
    assert WorkloadCard.objects.get(owner=learner).is_example is False


def test_instructor_can_publish_an_example(
    client: Client, instructor: object, learner: object
) -> None:
    logged_in(client, instructor)
    client.post(
        reverse("planner:card_create"),
        {"name": "Teacher's card", "query": BASELINE_QUERY, "is_example": "on"},
    )
    assert WorkloadCard.objects.get(owner=instructor).is_example is True
    client.logout()
    logged_in(client, learner)
    assert "Teacher&#x27;s card" in client.get(reverse("planner:cards")).content.decode()


def test_save_with_a_broken_calculation_is_400(client: Client, learner: object) -> None:
    logged_in(client, learner)
    response = client.post(
        reverse("planner:card_create"),
        {"name": "Bad", "query": "estimate=serving&gpu_memory_gb=-1"},
    )
    assert response.status_code == 400
    assert not WorkloadCard.objects.exists()


def test_list_shows_mine_and_examples_not_others(client: Client, learner: object) -> None:
    workload_cards_seed_examples()
    make_card(learner, "My chat")
    make_card(UserFactory(), "Someone else's secret plan")
    logged_in(client, learner)
    html = client.get(reverse("planner:cards")).content.decode()
    assert "My chat" in html
    assert "Live chat on an 8B model" in html and "Nightly embedding of 50,000 chunks" in html
    assert "Occasional fine-tuning" in html
    assert "secret plan" not in html


def test_empty_state_says_what_to_do(client: Client, learner: object) -> None:
    logged_in(client, learner)
    assert "Save as a workload card" in client.get(reverse("planner:cards")).content.decode()


def test_delete_own_card(client: Client, learner: object) -> None:
    card = make_card(learner)
    logged_in(client, learner)
    assert client.get(reverse("planner:card_delete", args=[card.pk])).status_code == 405
    assert client.post(reverse("planner:card_delete", args=[card.pk])).status_code == 302
    assert not WorkloadCard.objects.filter(pk=card.pk).exists()


def test_another_learners_card_is_404_to_delete_and_compare(
    client: Client, learner: object
) -> None:
    other = make_card(UserFactory(), "Theirs")
    logged_in(client, learner)
    assert client.post(reverse("planner:card_delete", args=[other.pk])).status_code == 404
    assert WorkloadCard.objects.filter(pk=other.pk).exists()
    mine = make_card(learner, "Mine")
    url = reverse("planner:cards_compare")
    assert client.get(url, {"card": [mine.pk, other.pk]}).status_code == 404
    assert client.get(url, {"card": ["x"]}).status_code == 404


def test_example_cards_cannot_be_deleted_by_learners(client: Client, learner: object) -> None:
    example = workload_cards_seed_examples()[0]
    logged_in(client, learner)
    assert client.post(reverse("planner:card_delete", args=[example.pk])).status_code == 404


def test_compare_side_by_side(client: Client, learner: object) -> None:
    chat, batch, training = workload_cards_seed_examples()
    mine = make_card(learner, "My chat")
    logged_in(client, learner)
    response = client.get(
        reverse("planner:cards_compare"), {"card": [mine.pk, chat.pk, batch.pk, training.pk]}
    )
    assert response.status_code == 200
    html = response.content.decode()
    for name in ("My chat", chat.name, batch.name, training.name):
        assert name in html
    assert "Max active users" in html and "Workers needed" in html and "Training total (GB)" in html
    # The table scrolls in its own box, which the keyboard can focus; figures are rounded for
    # reading (the live chat card's 1.073742 GB per user shows as 1.074).
    assert re.search(r'class="table-wrap compare-wrap" role="region"[^>]*tabindex="0"', html)
    assert "<td>1.074</td>" in html and "1.073742" not in html
    assert "4 workload cards side by side" in html


def test_cards_need_login(client: Client) -> None:
    assert client.get(reverse("planner:cards")).status_code == 302
    assert (
        client.post(
            reverse("planner:card_create"), {"name": "x", "query": BASELINE_QUERY}
        ).status_code
        == 302
    )


def test_seed_is_idempotent_and_the_examples_are_right() -> None:
    """Three examples, once each; the live chat card fits 20 users at 8k context on an H100 SXM, as lesson 8 sizes it."""
    call_command("seed_workload_cards", stdout=StringIO())
    call_command("seed_workload_cards", stdout=StringIO())
    examples = WorkloadCard.objects.filter(is_example=True, owner=None)
    assert examples.count() == 3
    chat = examples.get(slug="live-chat-7b")
    assert chat.kind == WorkloadCard.Kind.INTERACTIVE_SERVING
    assert chat.concurrency == 20 and chat.latency_target_ms == 2000
    assert chat.result["context_tokens"] == 8192 and chat.result["fits"] is True
    assert chat.result["kv_bytes_per_token"] == 131_072  # Llama 3.1 8B: 2 × 32 × 8 × 128 × 2
    batch = examples.get(slug="nightly-embeddings")
    assert batch.kind == WorkloadCard.Kind.BATCH_INFERENCE and batch.batch_window_hours == 2
    assert batch.result["items"] == 50_000 and batch.result["fits_window"] is True
    training = examples.get(slug="occasional-fine-tuning")
    assert training.kind == WorkloadCard.Kind.TRAINING and training.result["checkpointing"] is True


def test_card_latency_target_is_checked_against_decode_speed(
    client: Client, learner: object
) -> None:
    """A card's latency target with the calculation's output length: 256 tokens in 2 s need
    128 tokens/s, more than an L4 can stream for Llama-3.1-8B, so the card records memory_bound."""
    logged_in(client, learner)
    query = "estimate=serving&gpu=l4&model=llama-3.1-8b&context_tokens=8192&output_tokens=256"
    response = client.post(
        reverse("planner:card_create"),
        {"name": "Chat on an L4", "query": query, "latency_target_ms": "2000"},
    )
    assert response.status_code == 302
    card = WorkloadCard.objects.get(owner=learner)
    assert card.latency_target_ms == 2000
    assert card.inputs["latency_target_ms"] == "2000"
    assert card.result["required_decode_tokens_per_s"] == 128.0
    assert "memory_bound" in [w["code"] for w in card.result["warnings"]]


def test_cards_and_compare_show_names_and_rounded_figures_not_codes(
    client: Client, learner: object
) -> None:
    """People read "Llama 3.1 8B", "NVIDIA H100 SXM", "21.3 GB", "1.7 h" and warning titles; the
    ids, codes and exact figures stay in the JSON (and on hover)."""
    cards = workload_cards_seed_examples()
    logged_in(client, learner)
    listing = client.get(reverse("planner:cards")).content.decode()
    compare = client.get(
        reverse("planner:cards_compare"), {"card": [c.pk for c in cards]}
    ).content.decode()
    for html in (listing, compare):
        visible = re.sub(r"<[^>]+>", " ", html)
        for code in ("mistral-7b", "target_users_do_not_fit", "weight_precision"):
            assert code not in visible, code
        assert not re.search(r"\d\.\d{5,}", visible)
    assert "Llama 3.1 8B" in listing


@pytest.mark.parametrize("card", ["9223372036854775808", "-9223372036854775809", "0"])
def test_compare_answers_404_for_ids_no_card_can_have(
    client: Client, learner: object, card: str
) -> None:
    logged_in(client, learner)
    response = client.get(reverse("planner:cards_compare"), {"card": [card]})
    assert response.status_code == 404


def test_compare_refuses_more_cards_than_a_comparison_holds(
    client: Client, learner: object
) -> None:
    mine = make_card(learner, "Mine")
    logged_in(client, learner)
    response = client.get(reverse("planner:cards_compare"), {"card": [mine.pk] * 51})
    assert response.status_code == 400
    assert response.content.decode() == "card: compare at most 50 workload cards at once."
    assert client.get(reverse("planner:cards_compare"), {"card": [mine.pk] * 50}).status_code == 200


def test_each_card_opens_its_path_comparison(client: Client, learner: object) -> None:
    """The course's three cards each link to their comparison, which answers for that card: the
    chat card at its 20 users and 2 s first token, the embedding job on a CPU server in its window."""
    chat, batch, training = workload_cards_seed_examples()
    logged_in(client, learner)
    listing = client.get(reverse("planner:cards")).content.decode()
    links = re.findall(r'href="(/planner/paths/\?[^"]+)" data-testid="compare-paths"', listing)
    assert len(links) == 3
    for link, card in zip(links, (chat, batch, training), strict=True):
        assert f"estimate={card.inputs['estimate']}" in link
    chat_page = client.get(links[0].replace("&amp;", "&")).content.decode()
    assert 'data-accelerator="h100-sxm" data-count="1"' in chat_page
    # The L4 row's reason: replicas would carry the 20 users, but not the chat preset's p95
    # inter-token latency.
    assert "inter-token latency" in chat_page and "50 ms target" in chat_page
    batch_api = client.get(
        reverse("planner:api_paths") + "?" + links[1].split("?", 1)[1].replace("&amp;", "&")
    ).json()
    cpu = next(o for o in batch_api["options"] if o["accelerator"] == "cpu-server")
    assert cpu["meets"] is True and cpu["figures"]["hours_needed"] < 2
    compare = client.get(
        reverse("planner:cards_compare"), {"card": [chat.pk, batch.pk]}
    ).content.decode()
    assert compare.count('data-testid="compare-paths"') == 2
