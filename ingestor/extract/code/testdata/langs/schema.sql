-- Schema for the shop.
BEGIN;

-- Users of the shop.
CREATE TABLE users (
    id serial PRIMARY KEY,
    name text NOT NULL DEFAULT 'x'
);

CREATE INDEX users_name ON users (name);

create or replace function touch() returns trigger as $$
begin
create temp table fake (x int);
  return new;
end;
$$ language plpgsql;

ALTER TABLE users ADD COLUMN email text;

COMMIT;
