/** The order module. */
package io.ductor.modulithapp.order;
