"""The card sources: the data model, the YAML loader and the card-file schema."""
