/**
 * How Ductor manages its schema.
 */
@NullMarked
package io.ductor.jdbc;

import org.jspecify.annotations.NullMarked;
