"""Which protocol answers first is declared (simagent.protocols.PRECEDENCE), not import order."""

from simagent.protocols import _REGISTRY, PRECEDENCE, all_protocols, precedence


def test_every_registered_protocol_has_a_declared_place():
    names = [p.name for p in all_protocols()]
    assert sorted(names) == sorted(PRECEDENCE), set(names) ^ set(PRECEDENCE)
    assert len(set(PRECEDENCE)) == len(PRECEDENCE)


def test_all_protocols_follow_the_declared_order_whatever_the_registration_order(monkeypatch):
    names = [p.name for p in all_protocols()]
    assert names == sorted(names, key=precedence)
    # registration order reversed: the answer stays the declared order
    reversed_registry = dict(reversed(list(_REGISTRY.items())))
    monkeypatch.setattr("simagent.protocols._REGISTRY", reversed_registry)
    assert [p.name for p in all_protocols()] == names


def test_tensile_test_is_offered_before_elastic_constants():
    names = [p.name for p in all_protocols()]
    assert names.index("lammps/tensile_test") < names.index("lammps/elastic_constants")
    assert names.index("lammps/elastic_constants") < names.index("lammps/framework_eos")
