#!/usr/bin/env node
'use strict';

import { readFile } from 'node:fs/promises';

const PORT = 8080;

/** Doubles. */
export const double = (x) => x * 2;

const load = async (path) => {
  const text = await readFile(path, 'utf8');
  return text;
};

export const handler = async event => event;

const tpl = `
function fake() {}
`;

function plain(a, b) {
  return a + b;
}

export default class App {
  constructor(name) {
    this.name = name;
  }

  async start() {
    if (this.name) {
      return double(PORT);
    }
  }

  static create() {
    return new App('x');
  }

  onClick = (e) => {
    console.log(e);
  };
}

export async function* gen() {
  yield 1;
}
