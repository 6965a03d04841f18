"""Declared defaults (simagent/defaults.py): what the answer reports follows from what the request left
unset, with the reason declared next to the parameter model."""

from simagent.defaults import Default, DefaultsLog
from simagent.protocols import all_protocols


def test_take_reports_only_what_the_request_left_unset():
    log = DefaultsLog({"timestep": Default(0.002, "2 fs resolves vibrations above {light:g} u", shown="{value} ps")})
    assert log.take("timestep", 0.001, light=20) == 0.001
    assert log.applied == []
    assert log.take("timestep", None, light=20) == 0.002
    [entry] = log.applied
    assert (entry.parameter, entry.value) == ("timestep", "0.002 ps")
    assert entry.reason == "2 fs resolves vibrations above 20 u"


def test_report_fills_templates_from_the_built_parameters_and_names_variants():
    class P:
        ftol = 1e-8
        facet = "110"

    log = DefaultsLog({
        "minimiser": Default("cg", "tight", shown="cg, ftol {p.ftol:g} eV/A"),
        "slab": Default(3, "thick enough", shown="{n} periods", parameter="({p.facet}) slab"),
        "strain (static)": Default(1e-4, "linear regime", shown="+/-{value:g}", parameter="strain"),
    })
    log.report("minimiser", p=P)
    log.report("slab", p=P, n=4)
    assert log.report("strain (static)") == 1e-4
    assert [(d.parameter, d.value, d.reason) for d in log.applied] == [
        ("minimiser", "cg, ftol 1e-08 eV/A", "tight"),
        ("(110) slab", "4 periods", "thick enough"),
        ("strain", "+/-0.0001", "linear regime"),
    ]


def test_every_declared_default_gives_a_reason():
    """A default without a reason is a default the user cannot judge: each declared one says why."""
    declared = 0
    for protocol in all_protocols():
        for name, default in getattr(protocol.Params, "DEFAULTS", {}).items():
            variants = default.values() if isinstance(default, dict) else [default]  # per units style
            for entry in variants:
                declared += 1
                assert isinstance(entry, Default) and entry.reason.strip(), f"{protocol.name}: {name}"
    assert declared > 100
