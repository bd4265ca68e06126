"""The game tree in sequence form: the walk, exact values and best responses, restricted CFR,
tabular policies and population members."""
