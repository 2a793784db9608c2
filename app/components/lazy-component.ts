import { lazy, type ComponentType, type LazyExoticComponent } from "react";

/**
 * A component whose code the browser loads only when it is about to be shown
 * (record 034), while the server renders it in place. A plain `React.lazy`
 * would suspend on the server too, and React then sends the component as a
 * hidden block that only a script reveals: nothing for a browser without
 * scripts. So the server loads the module when this file loads, and the lazy
 * component resolves at once from then on; the browser fetches it on
 * `preload()` or when first rendered (hydration waits for it).
 */
export function lazyComponent<Props extends object>(
  load: () => Promise<ComponentType<Props>>,
): { Component: LazyExoticComponent<ComponentType<Props>>; preload: () => void } {
  let loaded: ComponentType<Props> | undefined;
  let loading: Promise<ComponentType<Props>> | undefined;
  const start = () =>
    (loading ??= load().then((component) => {
      loaded = component;
      return component;
    }));
  if (import.meta.env.SSR) void start();
  const Component = lazy(() => {
    if (loaded) {
      // Already here: a thenable that answers at once, so React renders without suspending
      // (React.lazy takes any thenable; a Promise would answer a tick later).
      const ready = { default: loaded };
      // oxlint-disable-next-line unicorn/no-thenable
      return { then: (resolve: (value: typeof ready) => void) => resolve(ready) } as unknown as Promise<
        typeof ready
      >;
    }
    return start().then((component) => ({ default: component }));
  });
  return { Component, preload: () => void start() };
}
