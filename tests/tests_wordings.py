"""Alternative wordings of the foundation's reference requests (shared by several tests)."""

NICKEL = [
    "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential",
    "What are the equilibrium lattice parameter and the cohesive energy of Ni (fcc) using Foiles' u3 EAM?",
    "Using the Foiles EAM potential, compute the lattice constant and cohesive energy of FCC nickel.",
]
SILICON = [
    "Lattice constant and cohesive energy of diamond silicon with the Stillinger–Weber potential",
    "Compute the cohesive energy and lattice parameter of Si in the diamond structure (Stillinger-Weber).",
    "diamond-cubic silicon, SW potential: lattice constant and cohesive energy?",
]
LJ = [
    "Average potential energy per particle and pressure of a Lennard-Jones fluid at T* = 0.85 and "
    "rho* = 0.86 with a 3 sigma cutoff and tail corrections",
    "For an LJ fluid at reduced temperature 0.85 and reduced density 0.86 (cutoff 3σ, with long-range "
    "tail corrections), what are the mean potential energy per particle and the pressure?",
    "Lennard-Jones liquid, T*=0.85, ρ*=0.86, rc = 3 sigma cutoff with tail corrections: U/N and pressure",
]
ARGON = [
    "Self-diffusion coefficient of liquid argon at 94.4 K and 1.374 g/cm3, Lennard-Jones with "
    "epsilon/kB = 120 K and sigma = 3.4 Å",
    "What is the diffusion coefficient of liquid Ar at 94.4 K, density 1.374 g/cm^3? Use LJ with "
    "ε/kB = 120 K and σ = 3.4 Å.",
    "Compute the self diffusivity of argon liquid (T = 94.4 K, 1.374 g/cc, epsilon/k_B = 120 K, sigma = 3.4 angstrom)",
]
