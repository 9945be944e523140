/**
 * The sample shop: stock.
 */
@NullMarked
package io.ductor.sample.stock;

import org.jspecify.annotations.NullMarked;
