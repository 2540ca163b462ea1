import assert from "node:assert/strict";
import { test } from "node:test";
import { addressHasExtras } from "./address-rule.ts";

test("street number and street name only are accepted", () => {
  for (const address of [
    "10 Rue de Rivoli",
    "10, rue de Rivoli",
    "10 bis rue de la Paix",
    "10-12 Boulevard Haussmann",
    "221B Baker Street",
    "Place Bellecour",
    "12 Rue du 4 Septembre",
    "3 Avenue du 8 Mai 1945",
    "5 Route Nationale 7",
    "1 Avenue de la Porte de Clichy",
    "4 Rue de la Bataille",
    "8 Rue du Codet",
    "15 Rue de l'Étang",
  ]) {
    assert.equal(addressHasExtras(address), false, address);
  }
});

test("anything else is refused: floor, apartment, building, code, postal code, second line", () => {
  for (const address of [
    "10 Rue de Rivoli, 3e étage",
    "10 Rue de Rivoli apt 4",
    "10 Rue de Rivoli 75001",
    "10 Rue de Rivoli\nBâtiment B",
    "Bât. C, 10 rue X",
    "10 rue X code 1234",
    "10 rue X étage 2",
    "10 rue X, porte gauche",
    "10 rue X 2nd floor",
    "Flat 3 221B Baker Street",
    "10 rue X bat B",
    "10 rue X digicode A12",
    "10 rue X #5",
    "10 Rue de Rivoli 3",
    "10 rue X; interphone Martin",
  ]) {
    assert.equal(addressHasExtras(address), true, address);
  }
});
