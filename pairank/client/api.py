"""The client's methods, listed once for `Client` and `AsyncClient` (see `pairank.client.surface`)."""

from __future__ import annotations

from pairank.client.handles import job_operation
from pairank.client.ops import (
    admin,
    corpora,
    evaluations,
    imports,
    inbox,
    judgements,
    matching,
    pairs,
    query_sets,
    ranking,
)
from pairank.client.ops import request as any_route
from pairank.client.surface import operation, paged


class Api:
    """Every API operation; each docstring is its operation's."""

    # Ranking (retried: they only read).
    rank = operation(ranking.rank)
    rank_texts = operation(ranking.rank_texts)
    duplicates = operation(ranking.duplicates)
    similarity = operation(ranking.similarity)
    compare = operation(ranking.compare)
    compare_metrics = operation(ranking.compare_metrics)

    # Match decisions: "has this been checked before?" (docs/guides/checked-before.md).
    match = operation(matching.match)
    match_many = operation(matching.match_many)
    calibrate_match = operation(matching.calibrate_match)
    match_calibration = operation(matching.match_calibration)
    match_policy = operation(matching.match_policy)
    set_match_policy = operation(matching.set_match_policy)
    twins = operation(matching.twins)

    # Corpora and their settings.
    create_corpus = operation(corpora.create_corpus)
    list_corpora = operation(corpora.list_corpora)
    get_corpus = operation(corpora.get_corpus)
    delete_corpus = operation(corpora.delete_corpus)
    set_language = job_operation(corpora.set_language)
    index_status = operation(corpora.index_status)
    calibrate = operation(corpora.calibrate)
    calibrate_ranking = operation(corpora.calibrate_ranking)

    # Documents.
    upsert = operation(corpora.upsert)
    get_document = operation(corpora.get_document)
    delete_document = operation(corpora.delete_document)
    list_documents = operation(corpora.list_documents)
    iter_documents = paged(corpora.iter_documents)
    import_file = job_operation(imports.import_file)

    # Pairs and judgements.
    add_pairs = operation(pairs.add_pairs)
    list_pairs = operation(pairs.list_pairs)
    judge = operation(pairs.judge)
    split_pairs = operation(pairs.split_pairs)
    delete_pair = operation(pairs.delete_pair)
    list_judgements = operation(judgements.list_judgements)
    iter_judgements = paged(judgements.iter_judgements)
    edit_judgement = operation(judgements.edit_judgement)
    delete_judgement = operation(judgements.delete_judgement)
    agreement = operation(judgements.agreement)
    set_judgement_scale = operation(judgements.set_judgement_scale)
    export_judgements = operation(judgements.export_judgements)
    import_judgements = operation(judgements.import_judgements)

    # Query sets: scored on demand and after every activation or ranking change.
    create_query_set = operation(query_sets.create_query_set)
    list_query_sets = operation(query_sets.list_query_sets)
    query_set_history = operation(query_sets.query_set_history)
    run_query_set = operation(query_sets.run_query_set)
    delete_query_set = operation(query_sets.delete_query_set)

    # The tips inbox (docs/guides/inbox.md).
    create_inbox = operation(inbox.create_inbox)
    list_inboxes = operation(inbox.list_inboxes)
    get_inbox = operation(inbox.get_inbox)
    delete_inbox = operation(inbox.delete_inbox)
    add_items = operation(inbox.add_items)
    list_clusters = operation(inbox.list_clusters)
    iter_clusters = paged(inbox.iter_clusters)
    get_cluster = operation(inbox.get_cluster)
    confirm = operation(inbox.confirm)
    reject = operation(inbox.reject)
    set_cluster_status = operation(inbox.set_cluster_status)
    move_item = operation(inbox.move_item)
    list_deliveries = operation(inbox.list_deliveries)

    # Evaluations.
    create_evaluation = operation(evaluations.create_evaluation)
    list_evaluations = operation(evaluations.list_evaluations)
    get_evaluation = operation(evaluations.get_evaluation)
    wait_evaluation = operation(evaluations.wait_evaluation)

    # Retraining, jobs and models (an admin key).
    retrain = job_operation(admin.retrain)
    get_job = job_operation(admin.get_job)
    list_jobs = operation(admin.list_jobs)
    list_models = operation(admin.list_models)
    activate = job_operation(admin.activate)
    rollback = job_operation(admin.rollback)
    delete_model = operation(admin.delete_model)

    # Keys (an admin key) and the caller's own.
    create_key = operation(admin.create_key)
    list_keys = operation(admin.list_keys)
    revoke_key = operation(admin.revoke_key)
    whoami = operation(admin.whoami)

    # Any route (what the methods above do not cover).
    request = operation(any_route)
