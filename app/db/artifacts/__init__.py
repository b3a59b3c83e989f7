"""Model artifacts in the database: each registered model's manifest of files, and the collection of the
blobs no model or job refers to any more (app/stores/artifacts holds the stores that use them)."""
