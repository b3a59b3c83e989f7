"""The repositories: small classes over one session each, the only code that runs SQL on the tables.

`corpora` (corpora, documents and their change log), `vectors` (pgvector rows beside the documents),
`pairs` (judged training pairs), `jobs` (the job queue and leases), `evaluations`, `model_versions`
(the model registry) and `api_keys`.
"""
