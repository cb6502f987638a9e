"""`python -m catalogo`: the same commands as the `catalogo` script."""

from catalogo.cli.main import main

main()
