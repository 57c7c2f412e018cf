"""Who the agent trusts: the book of decisions and the one door that applies them."""
