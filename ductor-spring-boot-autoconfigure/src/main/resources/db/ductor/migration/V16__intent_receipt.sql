-- What the receiver acknowledged for an intent's completed attempt, when its effect reported it: the
-- messaging relays record the broker's acknowledgement here (Kafka: topic, partition and offset;
-- RabbitMQ: confirmed, with the exchange and routing key). NULL for every other effect. Written only
-- by the completion of an attempt; no index names it, so completions stay heap-only updates, and a
-- NULL adds nothing to the row.
ALTER TABLE eec_effect_intent ADD COLUMN receipt text;
