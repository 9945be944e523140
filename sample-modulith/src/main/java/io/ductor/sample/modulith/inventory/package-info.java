/**
 * The inventory module: takes the stock of a completed order out, once per publication.
 */
@NullMarked
package io.ductor.sample.modulith.inventory;

import org.jspecify.annotations.NullMarked;
