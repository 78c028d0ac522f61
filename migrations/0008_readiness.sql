-- /health/ready compares the migrations on disk with those applied, through the application's
-- pool (which runs as swarm_app): it needs to read the names, nothing more.
grant select on schema_migrations to swarm_app;
