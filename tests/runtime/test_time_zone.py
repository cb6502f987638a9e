"""Every moment shown to people reads in the shop's time zone, São Paulo unless
CATALOGO_FUSO_HORARIO names another; JSON and the CSV for programs keep UTC instants."""

import csv
import datetime
import io
import re
import zoneinfo
from pathlib import Path

import openpyxl
import pytest
from starlette.testclient import TestClient

from catalogo.domain.text import format_moment
from catalogo.runtime import time_zone
from catalogo.runtime.settings import Settings, SettingsError
from tests.databases import Database
from tests.helpers import JSON, create_via_json
from tests.processes import catalogo, fetch, serving

# 2026-11-27 20:54:00 UTC: 17:54 in São Paulo (UTC-3), 05:54 the next day in Tokyo (UTC+9).
INSTANT = datetime.datetime(2026, 11, 27, 20, 54, tzinfo=datetime.UTC).timestamp()


def changed_at_the_instant(client: TestClient, db: Database) -> int:
    id = create_via_json(client, {"nome": "Caneca", "preco": "29.90"})["id"]
    assert isinstance(id, int)
    db.execute(
        "UPDATE produtos SET criado_em = ?, atualizado_em = ? WHERE id = ?", (INSTANT, INSTANT, id)
    )
    return id


class TestByDefaultTheShopReadsSaoPaulosTime:
    def test_the_list_and_the_edit_page_show_it_and_every_footer_names_the_zone(
        self, client: TestClient, db: Database
    ) -> None:
        id = changed_at_the_instant(client, db)
        lista = client.get("/produtos").text
        assert '<td class="alterado">27/11/2026 17:54</td>' in lista
        assert "Horários no fuso America/Sao_Paulo" in lista
        editar = client.get(f"/produtos/{id}").text
        assert "27/11/2026 17:54" in editar
        assert "Horários no fuso America/Sao_Paulo" in editar

    def test_the_csv_and_the_workbook_for_people_show_it_and_the_csv_for_programs_utc(
        self, client: TestClient, db: Database
    ) -> None:
        changed_at_the_instant(client, db)
        people = client.get("/produtos?formato=csv").content.decode("utf-8-sig")
        row = list(csv.reader(io.StringIO(people, newline=""), delimiter=";"))[1]
        assert row[6] == "2026-11-27 17:54:00"
        programs = client.get("/produtos", headers={"Accept": "text/csv"}).text
        assert list(csv.reader(io.StringIO(programs, newline="")))[1][6] == "2026-11-27T20:54:00Z"
        book = openpyxl.load_workbook(io.BytesIO(client.get("/produtos?formato=xlsx").content))
        assert book.active.cell(2, 7).value == datetime.datetime(2026, 11, 27, 17, 54)

    def test_json_keeps_the_instant_in_utc(self, client: TestClient, db: Database) -> None:
        id = changed_at_the_instant(client, db)
        produto = client.get(f"/produtos/{id}", headers=JSON).json()
        assert produto["atualizado_em"] == "2026-11-27T20:54:00Z"


def test_another_zone_is_read_by_the_pages_the_exports_and_the_command_line(
    database: str, db: Database, tmp_path: Path
) -> None:
    tokyo = {"CATALOGO_FUSO_HORARIO": "Asia/Tokyo"}
    assert catalogo(database, "seed", "1").returncode == 0
    db.execute("UPDATE produtos SET criado_em = ?, atualizado_em = ?", (INSTANT, INSTANT))
    with serving(database, tmp_path, env=tokyo) as (base, _):
        lista = fetch("GET", f"{base}/produtos").text
        assert '<td class="alterado">28/11/2026 05:54</td>' in lista
        assert "Horários no fuso Asia/Tokyo" in lista
        exported = fetch("GET", f"{base}/produtos?formato=csv").content.decode("utf-8-sig")
        assert "2026-11-28 05:54:00" in exported
    saved = tmp_path / "produtos.csv"
    done = catalogo(database, "exportar", "--saida", str(saved), env=tokyo)
    assert done.returncode == 0, done.stderr
    assert "2026-11-28 05:54:00" in saved.read_text(encoding="utf-8-sig")


def test_a_zone_that_does_not_exist_is_refused_naming_the_variable_and_examples() -> None:
    for name in ("", "Sao Paulo", "America/Sao_Paulo/", "../../etc/passwd", "zone.tab", "utc"):
        if not name:
            assert Settings.from_env({"CATALOGO_FUSO_HORARIO": name}).time_zone == (
                "America/Sao_Paulo"
            )  # empty, as an env file may leave it: the default
            continue
        with pytest.raises(SettingsError, match=r"CATALOGO_FUSO_HORARIO .*America/Sao_Paulo"):
            Settings(time_zone=name)


def test_a_command_with_a_zone_that_does_not_exist_stops_before_doing_anything(
    database: str,
) -> None:
    done = catalogo(database, "seed", "1", env={"CATALOGO_FUSO_HORARIO": "Marte/Olympus"})
    assert done.returncode == 1
    assert "CATALOGO_FUSO_HORARIO" in done.stderr and "'Marte/Olympus'" in done.stderr


def test_a_machine_without_the_systems_zones_reads_them_from_the_tzdata_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(zoneinfo, "TZPATH", ())
    time_zone._zone_file.cache_clear()
    try:
        time_zone.use("Asia/Tokyo")
        assert "tzdata" in time_zone._zone_file("Asia/Tokyo")
        assert format_moment(INSTANT) == "28/11/2026 05:54"
    finally:
        time_zone._zone_file.cache_clear()
        monkeypatch.undo()
        time_zone.use(Settings.time_zone)
    assert format_moment(INSTANT) == "27/11/2026 17:54"
    assert re.fullmatch(r"/.+/America/Sao_Paulo", time_zone._zone_file("America/Sao_Paulo"))
