// Unit tests of the player's keyboard map (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyAction, ownsKey, DRIVE_KEYS } from '../js/keys.js';

const body = { tagName: 'BODY' };
const at = (target = body, o = {}) => ({ target, driving: true, onSlots: false, onSIT: false, ...o });

test('each key of the key help asks for its action', () => {
  const want = {
    ' ': 'play', ArrowRight: 'step', ArrowLeft: 'back', Home: 'reset', End: 'end', n: 'next-stop', PageDown: 'next-stop',
    p: 'prev-stop', PageUp: 'prev-stop', P: 'present', '[': 'slower', ']': 'faster', b: 'mode', B: 'mode', c: 'colour',
    q: 'quiz', g: 'goto', '+': 'zoom-in', '=': 'zoom-in', '-': 'zoom-out',
  };
  for (const [key, a] of Object.entries(want)) assert.equal(keyAction({ key }, at()), a, key);
  assert.equal(keyAction({ key: 'ArrowRight', shiftKey: true }, at()), 'flush');
  for (const key of ['Enter', 'x', 'Tab', 'Escape']) assert.equal(keyAction({ key }, at()), null, key);
});

test('arrows up and down scroll the canvas they are pressed on, and nothing elsewhere', () => {
  assert.equal(keyAction({ key: 'ArrowUp' }, at(body, { onSlots: true })), 'slots-up');
  assert.equal(keyAction({ key: 'ArrowDown' }, at(body, { onSlots: true })), 'slots-down');
  assert.equal(keyAction({ key: 'ArrowUp' }, at(body, { onSIT: true })), 'sit-up');
  assert.equal(keyAction({ key: 'ArrowDown' }, at(body, { onSIT: true })), 'sit-down');
  assert.equal(keyAction({ key: 'ArrowDown' }, at()), null);
});

test('a focused control keeps its keys: typing, a select, a checkbox\'s space; a slider does not', () => {
  const text = { tagName: 'INPUT', type: 'text' };
  const box = { tagName: 'INPUT', type: 'checkbox' };
  const range = { tagName: 'INPUT', type: 'range' };
  assert.equal(keyAction({ key: 'n' }, at(text)), null);
  assert.equal(keyAction({ key: 'ArrowRight' }, at({ tagName: 'SELECT' })), null);
  assert.equal(keyAction({ key: 'q' }, at({ tagName: 'TEXTAREA' })), null);
  assert.equal(keyAction({ key: ' ' }, at(box)), null);
  assert.equal(keyAction({ key: 'n' }, at(box)), 'next-stop');
  assert.equal(keyAction({ key: 'ArrowRight' }, at(range)), 'step');
  assert.ok(ownsKey(text, 'g'));
  assert.ok(!ownsKey(null, 'g'));
});

test('modifier keys are the browser\'s', () => {
  for (const m of ['ctrlKey', 'metaKey', 'altKey']) assert.equal(keyAction({ key: 'n', [m]: true }, at()), null, m);
});

test('a follower mirroring its presenter ignores exactly the keys that drive the run', () => {
  const keys = [' ', 'ArrowRight', 'ArrowLeft', 'Home', 'End', 'PageDown', 'PageUp', 'n', 'p', '[', ']', 'b', 'B', 'q', 'g', 'P', 'c', '+', '-'];
  for (const key of keys) {
    const a = keyAction({ key }, at(body, { driving: false }));
    if (DRIVE_KEYS.has(key)) assert.equal(a, null, key);
    else assert.notEqual(a, null, `${key} is the viewer's own (presenter mode, colour, zoom)`);
  }
});
