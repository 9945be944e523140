/**
 * The benchmark against a minimal raw outbox and Spring Modulith.
 */
@NullMarked
package io.ductor.benchmarks;

import org.jspecify.annotations.NullMarked;
