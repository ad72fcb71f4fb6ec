// The shape of a JSON value: which keys, which value types, recursively; never the values. The
// elements of an array are merged into one shape, so `[{a: 1}, {a: null, b: 'x'}]` has elements
// with `a: number|null` and an optional `b`.

type Scalar = 'null' | 'boolean' | 'number' | 'string';

export interface Shape {
  scalars: Set<Scalar>;
  /** Present when some value was an object: each key's shape and whether some object lacked it. */
  object?: Map<string, { shape: Shape; optional: boolean }>;
  /** Present when some value was an array; `element` is undefined while every array was empty. */
  array?: { element?: Shape };
}

export interface ShapeDifference {
  /** Where, e.g. `results[].metadata.author` (empty for the value itself). */
  path: string;
  real: string;
  reference: string;
}

function scalarOf(value: unknown): Scalar {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  return 'string';
}

export function shapeOf(value: unknown): Shape {
  if (Array.isArray(value)) {
    const element = value
      .map(shapeOf)
      .reduce<Shape | undefined>((a, b) => (a ? mergeShapes(a, b) : b), undefined);
    return { scalars: new Set(), array: element ? { element } : {} };
  }
  if (typeof value === 'object' && value !== null) {
    const object = new Map<string, { shape: Shape; optional: boolean }>();
    for (const [key, inner] of Object.entries(value))
      object.set(key, { shape: shapeOf(inner), optional: false });
    return { scalars: new Set(), object };
  }
  return { scalars: new Set([scalarOf(value)]) };
}

export function mergeShapes(a: Shape, b: Shape): Shape {
  const merged: Shape = { scalars: new Set([...a.scalars, ...b.scalars]) };
  if (a.object || b.object) {
    const object = new Map<string, { shape: Shape; optional: boolean }>();
    const keys = new Set([...(a.object?.keys() ?? []), ...(b.object?.keys() ?? [])]);
    for (const key of keys) {
      const left = a.object?.get(key);
      const right = b.object?.get(key);
      const shape = left && right ? mergeShapes(left.shape, right.shape) : (left ?? right)?.shape;
      // A key is optional when an object on either side lacked it (a non-object value does not count).
      const optional = Boolean(
        left?.optional || right?.optional || (a.object && !left) || (b.object && !right),
      );
      if (shape) object.set(key, { shape, optional });
    }
    merged.object = object;
  }
  if (a.array || b.array) {
    const left = a.array?.element;
    const right = b.array?.element;
    const element = left && right ? mergeShapes(left, right) : (left ?? right);
    merged.array = element ? { element } : {};
  }
  return merged;
}

/** A one-line name of a shape's top level: `null|string`, `object`, `array`. */
export function describeShape(shape: Shape | undefined): string {
  if (!shape) return 'absent';
  const kinds: string[] = [...shape.scalars].sort();
  if (shape.object) kinds.push('object');
  if (shape.array) kinds.push('array');
  return kinds.sort().join('|') || 'nothing';
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Every place where the two shapes differ; an empty array matches any array. */
export function diffShapes(real: Shape, reference: Shape, path = ''): ShapeDifference[] {
  const out: ShapeDifference[] = [];
  if (describeShape(real) !== describeShape(reference)) {
    out.push({ path, real: describeShape(real), reference: describeShape(reference) });
  }
  if (real.object && reference.object) {
    const keys = new Set([...real.object.keys(), ...reference.object.keys()]);
    for (const key of [...keys].sort()) {
      const left = real.object.get(key);
      const right = reference.object.get(key);
      const where = join(path, key);
      if (!left || !right) {
        out.push({
          path: where,
          real: left ? describeShape(left.shape) : 'absent',
          reference: right ? describeShape(right.shape) : 'absent',
        });
        continue;
      }
      if (left.optional !== right.optional) {
        const presence = (optional: boolean) => (optional ? 'sometimes absent' : 'always present');
        out.push({ path: where, real: presence(left.optional), reference: presence(right.optional) });
      }
      out.push(...diffShapes(left.shape, right.shape, where));
    }
  }
  const left = real.array?.element;
  const right = reference.array?.element;
  if (left && right) out.push(...diffShapes(left, right, `${path}[]`));
  return out;
}
