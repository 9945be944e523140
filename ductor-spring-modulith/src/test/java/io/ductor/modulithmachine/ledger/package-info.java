/** The ledger module: books every taken order once, by its publication's key. */
package io.ductor.modulithmachine.ledger;
