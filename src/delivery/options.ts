/**
 * The router's `delivery` option: checked once at construction for the methods of the
 * {@link DeliveryAdapter} contract, with its default, a new {@link SimulatorDelivery}.
 */
import { assertAdapter, optionalAdapter, type MethodTable } from '../util/adapter-check.js';
import type { DeliveryAdapter } from './contract.js';
import { SimulatorDelivery } from './simulator.js';

/** The {@link DeliveryAdapter} contract's methods, checked at construction. */
const DELIVERY_METHODS = { start: true, submit: true, close: true, routes: false, routeFor: false, status: false } as const satisfies MethodTable<DeliveryAdapter>;

/** Checks the `delivery` option; without one, a new {@link SimulatorDelivery} (a fake carrier). */
export function resolveDelivery(given: DeliveryAdapter | undefined): DeliveryAdapter {
  const delivery = optionalAdapter('delivery', given, 'new SimulatorDelivery(), a fake carrier', (where, value) =>
    assertAdapter(where, value, DELIVERY_METHODS, 'DeliveryAdapter'),
  );
  return delivery ?? new SimulatorDelivery();
}
