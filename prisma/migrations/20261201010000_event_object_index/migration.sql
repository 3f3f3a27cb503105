-- A charge's timeline (the dashboard's charge page) reads its events by the id of the object they
-- carry; without this index that read scans every event of the merchant and mode.
CREATE INDEX "events_object_id_idx" ON "events" ("merchant_id", "livemode", (("data"->>'id')));
