"""The transaction coordinator: transactional ids, their producers and transactions."""
