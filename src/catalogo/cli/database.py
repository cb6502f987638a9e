"""`catalogo backup` and `catalogo copiar`: the catalog's database as a whole, for an operator
keeping a copy of a SQLite catalog, or moving one that outgrew its machine to PostgreSQL."""

import asyncio
import sys

from catalogo.runtime.settings import Settings, SettingsError
from catalogo.storage import copying, migrations
from catalogo.storage.postgres.loading import TargetUnusable
from catalogo.storage.sqlite.snapshot import BackupRefused, backup


def take_backup(settings: Settings, destination: str) -> None:
    if settings.database != "sqlite":
        sys.exit(
            "catalogo: backup copia um catálogo SQLite; o de CATALOGO_DATABASE_URL está no "
            "PostgreSQL: use pg_dump (docs/deploying.md)"
        )
    try:
        counts = backup(settings.sqlite_path, destination)
    except BackupRefused as error:
        sys.exit(f"catalogo: {error}")
    print(
        f"catalogo: backup em {destination}: {counts.get('produtos', 0)} produtos, "
        f"{counts.get('eventos', 0)} eventos do histórico; conferido (integrity_check ok)"
    )


def copy_to(settings: Settings, target_url: str) -> None:
    if settings.database != "sqlite":
        sys.exit(
            "catalogo: copiar lê um catálogo SQLite: CATALOGO_DATABASE_URL deve apontar para o "
            "arquivo (sqlite:///…)"
        )
    try:
        target = Settings(database_url=target_url)
    except SettingsError:
        target = None
    if target is None or target.database != "postgresql":
        sys.exit("catalogo: --para deve ser um PostgreSQL: postgresql://usuario:senha@host/banco")
    try:
        asyncio.run(copying.refuse_filled(target_url))
        migrations.upgrade(target)  # an empty database gets the schema; a current one is kept
        copied = asyncio.run(
            copying.copy(settings.sqlite_path, target_url, lambda line: print(f"  {line}"))
        )
    except (copying.CopyRefused, TargetUnusable, BackupRefused) as error:
        sys.exit(f"catalogo: {error}")
    rows = sum(table.rows for table in copied)
    print(
        f"catalogo: copiado: {len(copied)} tabelas, {rows} linhas, contagens e somas conferidas; "
        "aponte CATALOGO_DATABASE_URL para o PostgreSQL e rode os serviços"
    )
