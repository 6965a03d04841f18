"""Materials knowledge shared by the engines (tools/) and the graph's nodes (agents/): the structure
library (structures: names, CoRE MOF 2019, CIF checks), periodic frameworks (frameworks: P1 cells,
atom typing, blocking pockets), framework and guest force fields (forcefields), the library of
shipped interatomic potential files (potentials), and structure analysis of liquids (rdf).
Nothing here imports tools/ or agents/."""
