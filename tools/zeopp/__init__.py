"""Zeo++ adapter (pyzeo in a child process): engine (launch), inputs (P1 CIF, settings), run (the
child-process worker), native (compiled Zeo++ routines pyzeo hides), parse (outputs, channels),
pov (probe-occupiable volume), check (pre-run), protocols (zeopp/pore_geometry)."""
