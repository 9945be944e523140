/** The inventory module: reserves stock when an order is placed. */
package io.ductor.modulithapp.inventory;
