/**
 * {@code @Idempotent} Spring MVC handlers and the tenant scope of their keys.
 */
@NullMarked
package io.ductor.idempotency.web;

import org.jspecify.annotations.NullMarked;
