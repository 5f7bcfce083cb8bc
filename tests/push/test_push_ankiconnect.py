"""quizgen push into a running Anki: an AnkiConnect server backed by a real collection, read back through it.

The server is anki-connect-server (Python 3.12, in .venv/ankiconnect: `make test` installs it); where it
is missing these tests are skipped, and in CI (CI=true) they fail.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.errors import PushError
from quizgen.execution.pool import Pool
from quizgen.push import ankiconnect, packages
from quizgen.push.ankiconnect import AnkiConnect
from tests.support.anki import NAMES, build, collection, held_open
from tests.support.paths import REPO
from tests.support.projects import copy_project

SERVER = Path(
    os.environ.get("QUIZGEN_ANKICONNECT_SERVER")
    or REPO / ".venv" / "ankiconnect" / "bin" / "anki-connect-server"
)
SCHEDULING = (
    "cardId",
    "note",
    "deckName",
    "interval",
    "due",
    "reps",
    "lapses",
    "left",
    "queue",
    "type",
    "factor",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """An AnkiConnect server on a free port, over a new collection in tmp_path; its URL."""
    if not SERVER.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SERVER} is required in CI (make test installs it)")
        pytest.skip(f"{SERVER} is not installed (make .venv/ankiconnect/bin/anki-connect-server)")
    port = free_port()
    env = {
        **os.environ,
        "ANKICONNECT_COLLECTION_PATH": str(tmp_path / "anki" / "collection.anki2"),
        "ANKICONNECT_PORT": str(port),
    }
    (tmp_path / "anki").mkdir()
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen([str(SERVER), "api"], env=env, cwd=tmp_path, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5):
                    break
            except OSError:
                assert process.poll() is None, (tmp_path / "server.log").read_text()
                assert time.monotonic() < deadline, "the AnkiConnect server did not start in 120 s"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


class Recording(AnkiConnect):
    """A client that remembers the actions it sent."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.sent: list[str] = []

    def __call__(self, action: str, **params: Any) -> Any:
        self.sent.append(action)
        return super().__call__(action, **params)


KEY = {card_id: key for key, card_id in NAMES.items()}


def state(client: AnkiConnect) -> tuple[dict[str, Any], dict[int, Any], dict[int, Any]]:
    """Read back through AnkiConnect: the notes by card id, each card's scheduling and its reviews."""
    notes = {
        n["fields"]["Id"]["value"]: n for n in client("notesInfo", notes=client("findNotes", query="deck:*"))
    }
    cards = client("findCards", query="deck:*")
    scheduling = {c["cardId"]: {k: c[k] for k in SCHEDULING} for c in client("cardsInfo", cards=cards)}
    reviews = {int(k): v for k, v in client("getReviewsOfCards", cards=cards).items()}
    return notes, scheduling, reviews


def test_push_through_anki_connect_keeps_reviews_and_writes_only_the_edited_note(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, server: str
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    first = ankiconnect.push(AnkiConnect(server), packages(anki_build.written))
    assert [(d.deck, len(d.added), d.updated, d.left) for d in first.decks] == [
        ("Sample::Gradients", 7, [], []),
        ("Sample::Gradients::Tricky", 2, [], []),
    ]
    assert sorted(first.notetypes) == [f"quizgen {k} added" for k in ("basic", "myth", "order", "value")]
    assert first.media == 1
    client = AnkiConnect(server)
    notes, _, _ = state(client)
    assert set(notes) == set(NAMES)
    assert {n["modelName"] for n in notes.values()} == {
        f"quizgen {k}" for k in ("basic", "myth", "order", "value")
    }
    assert sorted(notes[KEY["value-braces"]]["tags"]) == ["braces", "tricky"]
    assert set(client("deckNames")) >= {"Sample::Gradients", "Sample::Gradients::Tricky"}
    reviewed = client("findCards", query=f"Id:{KEY['value-two-steps']} OR Id:{KEY['myth-zero-grad-zeros']}")
    assert client("answerCards", answers=[{"cardId": c, "ease": 3} for c in reviewed]) == [True, True]
    _, scheduling, reviews = state(client)
    assert all(len(reviews[c]) == 1 for c in reviewed)

    path = root / "cards" / "sample.yaml"
    path.write_text(path.read_text().replace("Gradients add up", "Gradients accumulate"))
    recording = Recording(server)
    again = ankiconnect.push(recording, packages(build(root, pool=pool).written))
    assert [(d.deck, d.added, d.updated, len(d.left)) for d in again.decks] == [
        ("Sample::Gradients", [], [KEY["value-two-steps"]], 6),
        ("Sample::Gradients::Tricky", [], [], 2),
    ]
    assert (again.notetypes, again.media) == ([], 0)
    assert recording.sent.count("updateNote") == 1 and "addNotes" not in recording.sent
    after, scheduling_after, reviews_after = state(client)
    assert reviews_after == reviews and scheduling_after == scheduling
    assert "Gradients accumulate" in after[KEY["value-two-steps"]]["fields"]["Explain"]["value"]
    assert {k: v for k, v in after.items() if k != KEY["value-two-steps"]} == {
        k: v for k, v in notes.items() if k != KEY["value-two-steps"]
    }


def test_a_note_type_changed_by_hand_is_refused_before_anything_is_written(
    anki_build: pipeline.Report, server: str
) -> None:
    client = AnkiConnect(server)
    built = packages(anki_build.written)
    ankiconnect.push(client, built)
    client("modelFieldAdd", modelName="quizgen myth", fieldName="Mine")
    recording = Recording(server)
    with pytest.raises(PushError) as caught:
        ankiconnect.push(recording, built)
    assert caught.value.message.startswith(
        f"{server}: note type 'quizgen myth' was changed by hand (fields Id, Claim, Verdict, Judge, Explain, "
        "Proof, Output, Torch, Setup, Source, Extra1, Extra2, Extra3, Mine; 1 card type(s)): quizgen can no "
        "longer update its notes."
    )
    assert set(recording.sent) <= {"version", "modelNames", "modelFieldNames", "modelTemplates"}


def test_nothing_listening_means_anki_is_not_running(
    anki_build: pipeline.Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANKI_BASE", str(tmp_path / "Anki2"))
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PushError) as caught:
        ankiconnect.push(AnkiConnect(url), [])
    assert caught.value.message == (
        f"{url}: Anki is not running ([Errno 111] Connection refused): start Anki (with the AnkiConnect "
        "add-on, code 2055492159) and push again, or push with Anki closed: quizgen push --profile NAME"
    )


def test_anki_running_without_anki_connect_says_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANKI_BASE", str(tmp_path / "Anki2"))
    with collection(tmp_path / "Anki2" / "User 1"):
        pass
    url = f"http://127.0.0.1:{free_port()}"
    with held_open(tmp_path / "Anki2" / "User 1"), pytest.raises(PushError) as caught:
        ankiconnect.push(AnkiConnect(url), [])
    assert caught.value.message.startswith(
        f"{url}: Anki is running but AnkiConnect does not answer ([Errno 111] Connection refused): install "
        "the AnkiConnect add-on (Tools -> Add-ons -> Get Add-ons, code 2055492159), restart Anki"
    )


def test_another_program_on_the_port_is_named_as_such() -> None:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>a web page</html>")

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.HTTPServer(("127.0.0.1", 0), Page) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        try:
            with pytest.raises(PushError, match=r"something other than AnkiConnect answers there \("):
                ankiconnect.push(AnkiConnect(url), [])
        finally:
            httpd.shutdown()
