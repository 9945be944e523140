/**
 * A two-module Modulith application (desk, ledger) driven by the publication lifecycle's
 * state-machine test.
 */
package io.ductor.modulithmachine;
