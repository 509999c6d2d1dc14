"""One module per API family; each registers its handlers with `routes.serves`, and
`routes.load_handlers` imports every module here."""
