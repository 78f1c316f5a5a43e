"""The graph explorer at /ui in a real headless Chromium (Debian's ``chromium``, driven by Playwright's Python API)
against a real ``loregraph serve`` with API keys: it loads with a key and draws the group's entities, search
centres on the hit, the time slider hides a fact after its end, clicking an entity shows its facts and each fact's
provenance, and a key of another group sees nothing of this one. Screenshots go to test-artifacts/explorer/."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from rest_support import Server
from scripted import ScriptedExtractor

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary found (apt-get install -y chromium; "
                                                         "scripts/setup.sh --with-tests does it as root)")

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "explorer"
KEY_ALPHA = "explorer-alpha-key-0123456789"
KEY_BETA = "explorer-beta-key-0123456789"
KEYS = [{"name": "alpha", "key": KEY_ALPHA, "groups": ["alpha"]}, {"name": "beta", "key": KEY_BETA, "groups": ["beta"]}]
T0 = datetime(2025, 1, 1, tzinfo=UTC)
TEAMS = {"garden": ["Fern", "Gale", "Hazel", "Iris"], "orchestra": ["Kai", "Lumen", "Maestro", "Nova"]}


def alpha_delta() -> tuple[GraphDelta, dict[str, str]]:
    g = "alpha"
    ents = {n: Entity(group_id=g, name=n, type="person") for names in TEAMS.values() for n in names}
    ents["Trumpet"] = Entity(group_id=g, name="Trumpet", type="tool")
    eps = {topic: Episode(group_id=g, name=f"{topic}-note", valid_at=T0, source_description="team chat",
                          content=f"{names[0]}: we all work together on the {topic}")
           for topic, names in TEAMS.items()}
    eps["trumpet"] = Episode(group_id=g, name="trumpet-note", valid_at=T0, source_description="team chat",
                             content="Kai: I play the trumpet in the orchestra")
    facts = []
    for topic, names in TEAMS.items():
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                facts.append(Fact(group_id=g, source_id=ents[a].id, target_id=ents[b].id, type="WORKS_WITH",
                                  fact=f"{a} works with {b} on the {topic}", valid_at=T0, episodes=[eps[topic].id]))
    ended = Fact(group_id=g, source_id=ents["Kai"].id, target_id=ents["Trumpet"].id, type="USES",
                 fact="Kai plays the trumpet", valid_at=T0, invalid_at=datetime(2025, 6, 1, tzinfo=UTC),
                 expired_at=datetime(2025, 6, 1, tzinfo=UTC), episodes=[eps["trumpet"].id])
    facts.append(ended)
    ids = {n: e.id for n, e in ents.items()} | {"ended": ended.id}
    return GraphDelta(group_id=g, episodes=list(eps.values()), entities=list(ents.values()), facts=facts), ids


def beta_delta() -> GraphDelta:
    ents = [Entity(group_id="beta", name=n, type="person") for n in ("Quentin", "Rosalind")]
    return GraphDelta(group_id="beta", entities=ents, facts=[Fact(
        group_id="beta", source_id=ents[0].id, target_id=ents[1].id, type="KNOWS", fact="Quentin knows Rosalind",
        valid_at=T0)])


@pytest.fixture(scope="module")
def world(tmp_path_factory, embedder):
    from loregraph.memory import Memory

    work = tmp_path_factory.mktemp("explorer")
    db = work / "memory.db"
    delta, ids = alpha_delta()

    async def prepare() -> None:
        async with await Memory.open(f"sqlite:///{db}", embedder=embedder, extractor=ScriptedExtractor()) as m:
            await m.upsert_delta(delta)
            await m.upsert_delta(beta_delta())
            await m.build_communities("alpha")

    asyncio.run(prepare())
    srv = Server(work, db, env={"LOREGRAPH_API_KEYS": json.dumps(KEYS)}).start()
    yield srv, ids
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def open_group(browser, url: str, key: str, group: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/ui")
    page.fill("#key", key)
    page.fill("#group", group)
    page.click("#connect button")
    page.wait_for_function("document.getElementById('status').textContent.length > 0")
    return page


def node_names(page) -> set[str]:
    return set(page.evaluate("explorer.cy.nodes().map(n => n.data('name'))"))


def edge_ids(page) -> set[str]:
    return set(page.evaluate("explorer.cy.edges().map(e => e.id())"))


def set_slider(page, when: datetime) -> None:
    page.evaluate("""(t) => { const r = explorer.state.range, s = document.getElementById('slider');
        s.value = Math.floor((Date.parse(t) - r.lo) / (r.hi - r.lo) * 100);
        s.dispatchEvent(new Event('change')); }""", when.isoformat())
    page.wait_for_function("document.getElementById('status').textContent.includes("
                           "'as of ' + document.getElementById('asof').textContent)")


def test_loads_with_a_key_and_draws_the_group(world, browser):
    srv, _ = world
    page = open_group(browser, srv.url, KEY_ALPHA, "alpha")
    page.wait_for_function("document.getElementById('status').textContent.includes('entities')")
    assert node_names(page) == {n for names in TEAMS.values() for n in names} | {"Trumpet"}
    assert len(edge_ids(page)) == 12  # the current facts; the ended one is not drawn now
    page.select_option("#colour", "community")
    colours = page.evaluate("explorer.cy.nodes().map(n => [n.data('name'), n.data('colour')])")
    by_name = dict(colours)
    assert by_name["Fern"] == by_name["Hazel"] != by_name["Kai"] == by_name["Nova"]  # two communities
    shot(page, "01-loaded")
    page.close()


def test_search_centres_on_the_hit(world, browser):
    srv, ids = world
    page = open_group(browser, srv.url, KEY_ALPHA, "alpha")
    page.wait_for_function("document.getElementById('status').textContent.includes('entities')")
    page.fill("#query", "Maestro")
    page.click("#search button")
    page.wait_for_function("document.getElementById('status').textContent.includes('match')")
    hit = page.evaluate("explorer.cy.nodes('.hit').map(n => n.id())")
    assert ids["Maestro"] in hit
    x, y, w, h = page.evaluate(f"""(() => {{ const n = explorer.cy.getElementById('{ids["Maestro"]}');
        const p = n.renderedPosition(); return [p.x, p.y, explorer.cy.width(), explorer.cy.height()]; }})()""")
    if len(hit) == 1:
        assert abs(x - w / 2) < 2 and abs(y - h / 2) < 2  # the hit is the centre of the view
    else:
        assert 0 <= x <= w and 0 <= y <= h
    shot(page, "02-search")
    page.close()


def test_the_slider_hides_a_fact_after_its_end(world, browser):
    srv, ids = world
    page = open_group(browser, srv.url, KEY_ALPHA, "alpha")
    page.wait_for_function("document.getElementById('status').textContent.includes('entities')")
    assert ids["ended"] not in edge_ids(page)
    set_slider(page, datetime(2025, 3, 1, tzinfo=UTC))  # while Kai still played the trumpet
    assert ids["ended"] in edge_ids(page)
    assert page.evaluate(f"explorer.cy.getElementById('{ids['ended']}').hasClass('ended')")
    shot(page, "03-slider-before-end")
    set_slider(page, datetime(2025, 9, 1, tzinfo=UTC))  # after it ended
    assert ids["ended"] not in edge_ids(page)
    assert len(edge_ids(page)) == 12
    page.close()


def test_clicking_an_entity_shows_its_facts_and_their_provenance(world, browser):
    srv, ids = world
    page = open_group(browser, srv.url, KEY_ALPHA, "alpha")
    page.wait_for_function("document.getElementById('status').textContent.includes('entities')")
    box = page.locator("#graph").bounding_box()
    assert box is not None
    x, y = page.evaluate(f"""(() => {{ const p = explorer.cy.getElementById('{ids["Kai"]}').renderedPosition();
        return [p.x, p.y]; }})()""")
    page.mouse.click(box["x"] + x, box["y"] + y)  # a real click on the drawn node
    page.wait_for_selector("#entity-name:text('Kai')")
    facts = page.locator("#facts .fact")
    assert facts.count() == 4  # three colleagues and the trumpet
    ended = page.locator("#facts .fact.ended")
    assert ended.count() == 1 and "2025-01-01 → 2025-06-01" in ended.inner_text()
    ended.locator("button.provenance").click()
    page.wait_for_selector("#facts .fact.ended .prov")
    assert "Kai: I play the trumpet in the orchestra" in ended.locator(".prov").inner_text()
    page.select_option("#colour", "community")
    shot(page, "04-provenance")
    page.click(".tabs button:text('timeline')")
    assert page.locator("#timeline li").count() == 4
    shot(page, "05-timeline")
    page.close()


def test_a_key_of_another_group_sees_nothing_of_this_one(world, browser):
    srv, _ = world
    page = open_group(browser, srv.url, KEY_BETA, "alpha")
    page.wait_for_function("document.getElementById('status').className === 'error'")
    assert "403" in page.inner_text("#status") and node_names(page) == set()
    page.fill("#query", "Kai")
    page.click("#search button")
    page.wait_for_timeout(300)
    assert node_names(page) == set() and "Kai" not in page.content()
    page.close()
    page = open_group(browser, srv.url, KEY_BETA, "beta")
    page.wait_for_function("document.getElementById('status').textContent.includes('entities')")
    assert node_names(page) == {"Quentin", "Rosalind"}
    page.fill("#query", "Kai Hazel Trumpet")
    page.click("#search button")
    page.wait_for_function("document.getElementById('status').textContent.includes('match')")
    assert node_names(page) <= {"Quentin", "Rosalind"}
    shot(page, "06-other-group")
    page.close()
