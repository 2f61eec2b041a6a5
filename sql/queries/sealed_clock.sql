-- A build's version is the engine's clock when it starts; the project's newest build before it is
-- the one it replaces, kept while reads planned against it finish.
SELECT now64(3) AS now, (SELECT max(version) FROM sealed_builds WHERE project_id = {project:String}) AS previous
