"""The site preview page says what SchedLab read from the files (issue 24 §1 on the web): the engine's own
description (nodes, partitions, priority, scheduler, limits, QOS, associations) and, at the top of the
page, the warnings: no QOS/association limit enforced (slurm.conf without AccountingStorageEnforce=limits),
and the settings read but not followed, as engine.api.site_reading lists them (the same lists
``python -m engine site`` prints)."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from engine.api import describe_site, site_reading
from tests.webapp.conftest import login
from tests.webapp.preview.test_site_preview import PBS, SLURM, post_site, proposal_post, slurm_files, upload
from webapp.preview.models import SitePreview

ENFORCE = "AccountingStorageEnforce=associations,limits,qos\n"
NOT_ENFORCED = "No QOS or association limit is enforced"


def page_of(client, preview: SitePreview) -> str:  # noqa: ANN001
    return html.unescape(client.get(preview.get_absolute_url()).content.decode())


def warnings(page: str, side: str = "current") -> str:
    """The warning box of ``side`` as HTML ("" when there is none)."""
    found = re.search(rf'<div class="error-box site-warning" id="site-warnings-{side}".*?</div>', page, re.S)
    return found.group(0) if found else ""


def text(part: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part)).strip()


def section(page: str, side: str) -> str:
    """The text of the "What SchedLab read" part of ``side``."""
    found = re.search(rf'<div class="site-reading" id="site-read-{side}">.*?</div>', page, re.S)
    return text(found.group(0)) if found else ""


def qos_with(column: str, value: str, base: str | None = None) -> str:
    """qos.txt (or ``base``, its text) with ``column`` of QOS normal set to ``value``."""
    lines = (base if base is not None else (SLURM / "qos.txt").read_text()).splitlines()
    index = lines[0].split("|").index(column)
    cells = lines[1].split("|")
    cells[index] = value
    return "\n".join([lines[0], "|".join(cells), *lines[2:]]) + "\n"


@pytest.mark.django_db
def test_the_test_site_enforces_its_limits_and_warns_only_of_what_the_engine_lists_as_not_followed(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    page = page_of(client, preview)
    reading = site_reading(preview.site("current"))
    assert reading.limits_enforced and NOT_ENFORCED not in page
    box = warnings(page)
    # the real Slurm's files set bf_continue and AccountingStorageEnforce associations,qos: read, not followed
    assert [text(item) for item in re.findall(r"<li>(.*?)</li>", box, re.S)] == reading.unfollowed
    assert any(item.startswith("SchedulerParameters bf_continue") for item in reading.unfollowed)
    assert "GrpWall" not in box
    section = page[page.index('<section id="site-read">'):]
    for line in ("short (default): 1 nodes, MaxTime 00:05:00", "QOS normal: priority 0, max_jobs_per_user 4",
                 "association physics/alice: shares 1", "limits: AccountingStorageEnforce associations,limits,qos"):
        assert line in section
    assert "SlurmctldHost (line 5)" in section and "SlurmctldHost" not in box    # outside the model: listed below
    # the lists are the CLI's: its last line is every key read and not used
    printed = describe_site(preview.site("current"))[-1]
    assert printed == "not modelled (read, not used): " + ", ".join(reading.unmodelled + reading.unfollowed)


@pytest.mark.django_db
def test_a_slurm_conf_without_accounting_storage_enforce_warns_that_no_limit_is_enforced(alice, sacct_trace):
    conf = (SLURM / "slurm.conf").read_text()
    assert ENFORCE in conf
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files(conf.replace(ENFORCE, "")))
    page = page_of(client, SitePreview.objects.get())
    assert NOT_ENFORCED in warnings(page)
    assert page.index(NOT_ENFORCED) < page.index('id="site-read"') < page.index('id="site-results"')   # at the top
    assert "AccountingStorageEnforce not set: association and QOS limits NOT enforced" in page


@pytest.mark.django_db
def test_a_qos_usage_factor_and_a_grpwall_are_followed_shown_with_the_qos_and_not_warned_of(alice, sacct_trace):
    # UsageFactor (the usage its jobs add) and GrpWall are followed: on QOS normal's line of what
    # SchedLab read, not named in the warnings; UsageFactorSafe, a flag not followed, is
    client = login(alice)
    qos = qos_with("GrpWall", "10:00:00", qos_with("UsageFactor", "0.5", qos_with("Flags", "UsageFactorSafe")))
    post_site(client, sacct_trace, **{**slurm_files(), "qos": upload("qos.txt", SLURM / "qos.txt", qos)})
    page = page_of(client, SitePreview.objects.get())
    box = text(warnings(page))
    assert "QOS normal Flags UsageFactorSafe (not followed" in box and NOT_ENFORCED not in box
    assert "UsageFactor=" not in box and "GrpWall" not in box
    assert "grp_wall 10:00:00, usage factor 0.5, flags UsageFactorSafe" in section(page, "current")


def page_with_proposal(alice, sacct_trace, conf: str | None = None, **changes: str) -> str:  # noqa: ANN001
    """The page of the test site with a proposal run: ``conf`` as its slurm.conf text, ``changes`` in its form."""
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    data = {**proposal_post(preview, **changes), **({"text0": conf} if conf is not None else {})}
    assert client.post(reverse("preview:site_propose", args=[preview.pk]), data).status_code == 302
    return page_of(client, preview)


@pytest.mark.django_db
def test_a_proposal_read_differently_gets_its_own_reading_and_warning(alice, sacct_trace):
    page = page_with_proposal(alice, sacct_trace, (SLURM / "slurm.conf").read_text().replace(ENFORCE, ""))
    assert NOT_ENFORCED in warnings(page, "proposed") and NOT_ENFORCED not in warnings(page, "current")
    proposed = section(page, "proposed")      # only what reads differently
    assert "limits: AccountingStorageEnforce not set" in proposed and "QOS normal" not in proposed
    assert "QOS normal: priority 0, max_jobs_per_user 4" in section(page, "current")


@pytest.mark.django_db
def test_a_proposal_with_the_same_warnings_does_not_repeat_them(alice, sacct_trace):
    page = page_with_proposal(alice, sacct_trace, PriorityWeightFairshare="20000")
    assert "In your files and the proposal “my change”:" in text(warnings(page)) and not warnings(page, "proposed")
    proposed = section(page, "proposed")
    assert "what reads differently priority: priority/multifactor, weights age 1,000, fairshare 20,000" in proposed
    assert "nodes vm" not in proposed and "QOS normal" not in proposed
    assert "Instead of (as the current files read): priority: priority/multifactor, weights age 1,000, fairshare 10,000" in proposed


@pytest.mark.django_db
def test_a_pbs_site_shows_its_limits_on_resources_not_followed(alice, sacct_trace):
    server = (PBS / "print_server.txt").read_text() + "set queue workq max_run_res.ngpus = [u:PBS_GENERIC=2]\n"
    client = login(alice)
    response = post_site(client, sacct_trace, cpus=4, pbs_server=upload("print_server.txt", PBS, server),
                         sched_config=upload("sched_config", PBS / "sched_config"),
                         resource_group=upload("resource_group", PBS / "resource_group"))
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    page = page_of(client, preview)
    reading = site_reading(preview.site("current"))
    assert reading.unfollowed == ["queue workq max_run_res.ngpus (of resources only ncpus is followed)"]
    assert reading.unfollowed[0] in text(warnings(page)) and NOT_ENFORCED not in page
    assert "workq: priority 0, max_run_res.ngpus" in page and "fair-share tree: meta (100 under root)" in page
    assert "sched_config preemptive_sched (line 18)" in page[page.index('id="site-read"'):]
