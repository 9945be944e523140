-- The trace context of the code that recorded an intent (W3C traceparent and tracestate, and the
-- baggage the application propagates), as a JSON object of the propagated fields, so that every
-- attempt of the intent continues that trace, on any instance and after a restart. NULL when the
-- intent was recorded without a tracer or outside a trace. Nullable without a default: adding it
-- rewrites no row.
ALTER TABLE eec_effect_intent ADD COLUMN trace_context jsonb;
