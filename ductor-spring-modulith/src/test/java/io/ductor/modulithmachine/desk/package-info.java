/**
 * The desk module: takes orders and publishes
 * {@link io.ductor.modulithmachine.desk.Taken}.
 */
package io.ductor.modulithmachine.desk;
