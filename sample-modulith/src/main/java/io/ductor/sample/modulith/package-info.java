/**
 * A two-module Spring Modulith application on Ductor.
 */
@NullMarked
package io.ductor.sample.modulith;

import org.jspecify.annotations.NullMarked;
