"""One module per API family; each registers its handlers with `dispatch.serves`."""
