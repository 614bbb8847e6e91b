"""A Python policy plugin the server's admin put in the SCHEDLAB_POLICY_DIR folder is offered in the
new-experiment picker, in its family, with its docstring, and runs; a broken one is left out."""

from __future__ import annotations

import logging
import textwrap

import pytest
from django.urls import reverse

from engine.policies import registry
from tests.plugin_registry import fresh_registry  # noqa: F401  (a fixture)
from webapp.experiments.models import Run
from webapp.experiments.plugins import load_installed_policies
from webapp.experiments.provenance import run_items
from webapp.experiments.tasks import run_simulation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_registry")]

PLUGIN = '''
from engine.api import Algorithm, Param


class LargestThatFits(Algorithm):
    """Largest that fits (a plugin of this server): the largest waiting job that fits starts first."""

    name = "largest-that-fits"
    parameters = (Param("at_most", "int", 1000, "start at most this many jobs an instant", minimum=1),)

    def schedule(self):
        sim = self.sim
        for _ in range(self.params["at_most"]):
            fitting = [job for job in self.queue.jobs() if sim.fits(job)]
            if not fitting:
                return
            self.start(max(fitting, key=lambda job: (sim.size[job], -job)))
'''


def test_a_plugin_of_the_settings_folder_is_offered_and_runs(settings, tmp_path, alice_client, demo_trace, caplog):
    (tmp_path / "largest.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "broken.py").write_text("from engine.api import Algorithm\nundefined_name\n")
    settings.SCHEDLAB_POLICY_DIR = str(tmp_path)
    with caplog.at_level(logging.ERROR, logger="webapp.experiments.plugins"):
        assert load_installed_policies() == ["largest-that-fits"]
    assert [r.getMessage() for r in caplog.records] == [
        f"policy plugin left out: {tmp_path / 'broken.py'}, line 2: NameError: name 'undefined_name' is not defined"]

    page = alice_client.get(reverse("experiments:new")).content.decode()
    assert 'name="policy_largest-that-fits"' in page and 'name="param_largest-that-fits_at_most"' in page
    assert registry.FAMILIES["plugins"] in page
    assert "Largest that fits (a plugin of this server)" in page

    data = {"trace": demo_trace.pk, "machine_source": "header", "allocation": "count", "seed": "0",
            "policy_largest-that-fits": "on", "param_largest-that-fits_at_most": "3", "policy_fcfs": "on"}
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    run = Run.objects.get(policy__preset="largest-that-fits")
    assert run.policy["params"]["at_most"] == 3
    run_simulation(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    items = dict(run_items(run))
    assert items["plugin"].startswith(f"largest-that-fits: {tmp_path / 'largest.py'} (sha256 ")
    assert "--policy-file largest.py --policy" in items["command"]


def test_nothing_is_loaded_without_a_folder_or_an_installed_plugin(settings):
    settings.SCHEDLAB_POLICY_DIR = ""
    assert load_installed_policies() == []
