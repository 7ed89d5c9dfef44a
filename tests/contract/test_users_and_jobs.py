"""One contract for users/tokens/ownership and import jobs, on SQLite and on PostgreSQL: the API's
sign-in, per-user isolation and background imports behave the same on either database."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from folio.domain.jobs import ImportJob, JobStatus
from folio.domain.users import LOCAL_USER_ID, ResourceKind, User, UserError, UserErrorCode

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass
class Stores:
    users: Any  # UserRepository + OwnershipRepository
    jobs: Any  # ImportJobRepository
    stale_jobs: Any  # jobs whose unfinished rows count as dead (PostgreSQL: after a quiet time)


@pytest.fixture(scope="module")
def pg_users_url(pg_server: Any) -> str:
    return str(pg_server.database("users_contract"))


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "sqlite":
        from folio.adapters.storage.sqlite.db import Database
        from folio.adapters.storage.sqlite.jobs import SqliteImportJobs
        from folio.adapters.storage.sqlite.users import SqliteUsers

        db = Database(tmp_path / "folio.db")
        db.migrate()
        jobs = SqliteImportJobs(db)
        yield Stores(SqliteUsers(db), jobs, jobs)
        return
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.postgres.jobs import PostgresImportJobs
    from folio.adapters.storage.postgres.users import PostgresUsers

    url = request.getfixturevalue("pg_users_url")
    request.getfixturevalue("pg_server").truncate(url)
    pg = PgDatabase(url, max_size=2)
    yield Stores(
        PostgresUsers(pg), PostgresImportJobs(pg), PostgresImportJobs(pg, stale_after=timedelta(0))
    )
    pg.close()


def user(name: str, at: datetime = T0) -> User:
    return User(f"id-{name}", name, at)


def test_users_are_found_by_name_and_token_and_a_taken_name_is_refused(stores: Stores) -> None:
    users = stores.users
    users.add(user("bob"), "hash-b")
    users.add(user("alice"), "hash-a")
    assert [u.name for u in users.list()] == ["alice", "bob"]
    assert users.count() == 2
    assert users.get_by_name("bob") == user("bob")
    assert users.get_by_token_hash("hash-a") == user("alice")
    assert users.get_by_token_hash("nope") is None
    with pytest.raises(UserError) as taken:
        users.add(User("id-other", "bob", T0), "hash-c")
    assert taken.value.code is UserErrorCode.DUPLICATE
    assert users.count() == 2  # nothing half-written
    with pytest.raises(UserError) as missing:
        users.get_by_name("carol")
    assert missing.value.is_not_found


def test_a_new_token_replaces_the_old_one_and_a_deleted_user_signs_in_no_more(
    stores: Stores,
) -> None:
    users = stores.users
    users.add(user("bob"), "old")
    users.set_token_hash("id-bob", "new")
    assert users.get_by_token_hash("old") is None
    assert users.get_by_token_hash("new") == user("bob")
    users.delete("id-bob")
    assert users.get_by_token_hash("new") is None
    assert users.count() == 0


def test_ownership_defaults_to_the_local_user_and_follows_the_last_claim(stores: Stores) -> None:
    owners = stores.users
    owners.set_owner(ResourceKind.BOOK, "b1", "id-bob")
    owners.set_owner(ResourceKind.BOOK, "b2", "id-alice")
    owners.set_owner(ResourceKind.BOOK, "b2", "id-bob")
    owners.set_owner(ResourceKind.CONVERSATION, "b1", "id-alice")  # kinds are separate
    assert owners.owner_of(ResourceKind.BOOK, "b1") == "id-bob"
    assert owners.owners(ResourceKind.BOOK, ["b2", "b1", "b3", "b1"]) == {
        "b2": "id-bob",
        "b1": "id-bob",
        "b3": LOCAL_USER_ID,
    }
    owners.forget(ResourceKind.BOOK, "b1")
    assert owners.owner_of(ResourceKind.BOOK, "b1") == LOCAL_USER_ID
    assert owners.owner_of(ResourceKind.CONVERSATION, "b1") == "id-alice"
    many = [f"x{i}" for i in range(1200)]  # more than one SQLite batch
    for rid in many[::300]:
        owners.set_owner(ResourceKind.BOOK, rid, "id-bob")
    found = owners.owners(ResourceKind.BOOK, many)
    assert len(found) == 1200
    assert sum(owner == "id-bob" for owner in found.values()) == 4


def job(job_id: str, status: JobStatus, at: datetime = T0, **kw: Any) -> ImportJob:
    return ImportJob(job_id, "id-bob", f"book-{job_id}", f"{job_id}.epub", status, at, at, **kw)


def test_a_job_is_saved_again_as_it_progresses_and_read_back_whole(stores: Stores) -> None:
    jobs = stores.jobs
    first = job("j1", JobStatus.QUEUED)
    jobs.save(first)
    assert jobs.get("j1") == first
    later = first.moved(T0 + timedelta(seconds=3), status=JobStatus.RUNNING, stage="embed",
                        done=40, total=120)  # fmt: skip
    jobs.save(later)
    assert jobs.get("j1") == later
    failed = later.moved(T0 + timedelta(seconds=4), status=JobStatus.FAILED,
                         error_code="BAD_FILE", error_message="not an EPUB")  # fmt: skip
    jobs.save(failed)
    assert jobs.get("j1") == failed
    assert jobs.get("missing") is None


def test_unfinished_jobs_of_a_stopped_server_are_failed_and_finished_ones_kept(
    stores: Stores,
) -> None:
    now = datetime.now(UTC)
    for job_id, status in [("q", JobStatus.QUEUED), ("r", JobStatus.RUNNING),
                           ("d", JobStatus.DONE)]:  # fmt: skip
        stores.jobs.save(job(job_id, status, now - timedelta(hours=1)))
    assert stores.stale_jobs.fail_unfinished("The server stopped") == 2
    assert stores.jobs.get("q").status is JobStatus.FAILED
    assert stores.jobs.get("q").error_code == "INTERRUPTED"
    assert stores.jobs.get("r").error_message == "The server stopped"
    assert stores.jobs.get("d").status is JobStatus.DONE
    assert stores.stale_jobs.fail_unfinished("again") == 0


def test_postgresql_leaves_running_the_imports_another_live_server_is_doing(
    request: pytest.FixtureRequest,
) -> None:
    """Several servers share PostgreSQL: one starting must not fail the import another runs."""
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.postgres.jobs import PostgresImportJobs

    url = request.getfixturevalue("pg_users_url")
    request.getfixturevalue("pg_server").truncate(url)
    pg = PgDatabase(url, max_size=2)
    jobs = PostgresImportJobs(pg)  # the default quiet time (minutes)
    now = datetime.now(UTC)
    jobs.save(job("live", JobStatus.RUNNING, now - timedelta(seconds=5)))
    jobs.save(job("dead", JobStatus.RUNNING, now - timedelta(hours=2)))
    assert jobs.fail_unfinished("stopped") == 1
    assert jobs.get("live").status is JobStatus.RUNNING
    assert jobs.get("dead").status is JobStatus.FAILED
    pg.close()


def test_a_job_failed_as_interrupted_is_not_revived_by_a_late_save(stores: Stores) -> None:
    if isinstance(stores.jobs, type(stores.stale_jobs)) and stores.jobs is stores.stale_jobs:
        pytest.skip("SQLite: one server per file, so no other process saves the job late")
    running = job("slow", JobStatus.RUNNING, datetime.now(UTC) - timedelta(hours=1))
    stores.jobs.save(running)
    assert stores.stale_jobs.fail_unfinished("stopped") == 1
    stores.jobs.save(running.moved(datetime.now(UTC), status=JobStatus.DONE))
    assert stores.jobs.get("slow").status is JobStatus.FAILED
