/**
 * The real-PostgreSQL test harness shared by the modules' tests.
 */
@NullMarked
package io.ductor.test;

import org.jspecify.annotations.NullMarked;
