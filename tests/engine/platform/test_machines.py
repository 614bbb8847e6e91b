"""Machine descriptions: Alea, AleaNG 8 columns, our YAML and CSV; bad lines named."""

from __future__ import annotations


import pytest

from engine.platform.machines import parse_machines, read_machines
from engine.workload import WorkloadError
from tests.shared_data import SHARED_DATA

DATA = (SHARED_DATA / "metacentrum")


def test_alea_machines_of_wagap():
    machine = read_machines(DATA / "alea" / "wagap-2013.swf.machines")
    zewura, zegox = machine.clusters
    assert (zewura.name, zewura.nodes, zewura.cores, zewura.ram_kb) == ("zewura", 20, 80, 529426432)
    assert (zegox.name, zegox.nodes, zegox.cores, zegox.ram_kb) == ("zegox", 48, 12, 94035968)
    assert machine.cores == 20 * 80 + 48 * 12 == 2176
    assert machine.format == "alea"


def test_aleang_machines_of_the_whole_metacentrum():
    machine = read_machines(DATA / "aleang" / "NGI_CZ.swf.machines")
    assert (len(machine.clusters), machine.nodes, machine.cores, machine.gpus) == (47, 799, 34_556, 290)
    halmir = machine.clusters[machine.cluster_index("halmir")]
    # RAM 1024 is below 10240, so GB: 1024 * 1024**2 KB; column 7 is a SPEC-like speed
    assert (halmir.ram_kb, halmir.speed, halmir.gpus) == (1024 ** 3, 8.0, 0)


def test_aleang_property_column_and_comments():
    machine = parse_machines(";cl_id\tname\tnodes\tCPUs\tspeed\tGB_RAM\tproperties\tGPUs\n"
                             "0\tcl_dedicated \t 4 \t 1 \t 1 \t 256 \t dedicated \t 4\n")
    (cluster,) = machine.clusters
    assert (cluster.properties, cluster.gpus, cluster.ram_kb) == (("dedicated",), 4, 256 * 1024 ** 2)


def test_crlf_and_a_seventh_alea_column():
    machine = parse_machines("0\tFIT-demo-cluster\t16\t16\t1\t67108864\t30\r\n")
    assert machine.clusters[0].properties == ("30",)


def test_yaml_with_units_gpus_properties_and_availability():
    machine = parse_machines("""clusters:
  - name: doom
    nodes: 30
    cores: 16
    ram: 67 GB
    gpus: 2
    speed: 1.5
    properties: [gpu, infiniband]
    available_from: 2013-09-30
    available_to: 1400000000
""")
    (doom,) = machine.clusters
    assert doom.ram_kb == 67 * 1024 ** 2 and doom.gpus == 2 and doom.properties == ("gpu", "infiniband")
    assert doom.available_from == 1380499200        # 2013-09-30 00:00 UTC
    assert doom.available_to == 1400000000


def test_csv_form():
    machine = parse_machines("name,nodes,cores,ram,gpus,properties\nminos,49,12,24 GiB,0,x86;linux\n")
    assert machine.clusters[0].properties == ("x86", "linux") and machine.cores == 588


@pytest.mark.parametrize("text, line, field", [
    ("0\tzewura\t20\t80\t1\t529426432\n1\tzegox\tmany\t12\t1\t94035968\n", 2, "nodes"),
    ("0\tzewura\t20\n", 1, "line"),
    ("clusters:\n  - name: a\n    nodes: 2\n    cores: x\n", 4, "cores"),
    ("clusters:\n  - name: a\n    nodes: 2\n    cores: 4\n    colour: red\n", 5, "colour"),
    ("clusters:\n  - name: a\n    nodes: 2\n    cores: 4\n    ram: 3 parsecs\n", 5, "ram"),
    ("name,nodes,cores\nminos,49\n", 2, "line"),
    # found by fuzzing: OverflowError, a two-line message, an unsortable key
    pytest.param("clusters:\n  - name: a\n    nodes: 2\n    cores: 4\n    ram: " + "9" * 400 + " GiB\n", 5, "ram",
                 id="400-digit ram"),
    ("clusters:\n  - name: a\n    nodes: 1e300\n    cores: 4\n", 3, "nodes"),
    ("clusters:\n  - name: a\n    nodes: 2\n    cores: 4\n    0: 1\n", 5, "0"),
    ("clusters:\n  - name: a\n    nodes: 2\x1a\n    cores: 4\n", 3, None),
])
def test_bad_lines_name_the_line_and_field(text, line, field):
    with pytest.raises(WorkloadError) as error:
        parse_machines(text, source="m.txt")
    assert (error.value.line, error.value.field) == (line, field)
    assert str(error.value).startswith(f"m.txt, line {line}:") and "\n" not in str(error.value)


@pytest.mark.parametrize("text", ["", "\n# only a comment\n"])
def test_an_empty_description_names_the_file(text):
    with pytest.raises(WorkloadError, match="^m.txt: no clusters"):
        parse_machines(text, source="m.txt")
