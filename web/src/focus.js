// A stable ref callback that focuses its element: Preact calls a ref again whenever the function
// changes, so an inline arrow would steal the focus back at every render.
export const focusOnMount = (el) => el?.focus();
