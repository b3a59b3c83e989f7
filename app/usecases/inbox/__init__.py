"""The tips inbox: incoming texts clustered, decided against corpora, triaged, re-matched on publish."""
