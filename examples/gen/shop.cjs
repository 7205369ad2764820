'use strict';
// Renders examples/shop.rsc with React's real Flight server (19.3.1, prod):
// a store page the way an app router would stream it. The shell (header,
// product grid of client components, Tailwind-style repeated classNames,
// resource hints) comes first; async server components inside Suspense
// boundaries (reviews, recommendations, one that throws) finish later and
// arrive as out-of-order rows; a long product description is outlined as a
// T (text) row.
//
//   NODE_ENV=production NODE_PATH=fixtures/gen/node_modules \
//     node --conditions react-server examples/gen/shop.cjs > examples/shop.rsc
const React = require('react');
const ReactDOM = require('react-dom');
const server = require('react-server-dom-webpack/server.node');

const h = React.createElement;
const MANIFEST = {
  'app/ui/AddToCart.js#AddToCart': { id: 'app/ui/AddToCart.js', chunks: ['cart', 'cart.8c1f.js'], name: 'AddToCart' },
  'app/ui/Price.js#default': { id: 'app/ui/Price.js', chunks: ['main', 'main.3f2a.js'], name: 'default' },
  'app/ui/SearchBox.js#SearchBox': { id: 'app/ui/SearchBox.js', chunks: ['main', 'main.3f2a.js'], name: 'SearchBox' },
  'app/ui/Carousel.js#Carousel': { id: 'app/ui/Carousel.js', chunks: ['vendors', 'vendors.91ab.js', 'carousel', 'carousel.17d2.js'], name: 'Carousel' },
};
const refs = new Map();
function client(key) {
  if (!refs.has(key)) {
    const i = key.lastIndexOf('#');
    refs.set(key, server.registerClientReference(function () {}, key.slice(0, i), key.slice(i + 1)));
  }
  return refs.get(key);
}
const AddToCart = client('app/ui/AddToCart.js#AddToCart');
const Price = client('app/ui/Price.js#default');
const SearchBox = client('app/ui/SearchBox.js#SearchBox');
const Carousel = client('app/ui/Carousel.js#Carousel');

function ticks(n) {
  return new Promise((resolve) => {
    const step = (k) => (k <= 0 ? resolve() : setImmediate(() => step(k - 1)));
    step(n);
  });
}

const CARD = 'group relative flex flex-col rounded-lg border border-gray-200 bg-white p-4 shadow-sm hover:shadow-md';
const TITLE = 'mt-2 text-sm font-medium text-gray-900 line-clamp-2';
const NAMES = ['Trail Runner', 'Canvas Tote', 'Wool Beanie', 'Desk Lamp', 'Ceramic Mug', 'Rain Jacket',
  'Water Bottle', 'Linen Shirt', 'Notebook Set', 'Field Watch', 'Pour-over Kettle', 'Camp Chair'];
const products = NAMES.map((name, i) => ({
  id: 'p' + (100 + i), name, price: 1900 + i * 750, currency: 'EUR',
  image: '/img/products/' + name.toLowerCase().replace(/[^a-z]+/g, '-') + '.webp',
  rating: 3 + (i % 3) * 0.5, stock: (i * 7) % 11,
}));

function Header() {
  ReactDOM.preconnect('https://cdn.shop.example');
  ReactDOM.preload('/fonts/inter.woff2', { as: 'font', type: 'font/woff2', crossOrigin: '' });
  return h('header', { className: 'sticky top-0 z-10 border-b bg-white/80 backdrop-blur' },
    h('nav', { className: 'mx-auto flex max-w-7xl items-center gap-6 px-4 py-3' },
      h('a', { href: '/', className: 'text-lg font-semibold' }, 'Shop'),
      ['New', 'Men', 'Women', 'Home', 'Sale'].map((t) =>
        h('a', { key: t, href: '/c/' + t.toLowerCase(), className: 'text-sm text-gray-600 hover:text-gray-900' }, t)),
      h(SearchBox, { placeholder: 'Search products', action: '/search' })));
}

function ProductCard({ p }) {
  return h('article', { className: CARD },
    h('img', { src: p.image, alt: p.name, width: 320, height: 320, loading: 'lazy', className: 'aspect-square w-full rounded-md object-cover' }),
    h('h3', { className: TITLE }, p.name),
    h(Price, { amount: p.price, currency: p.currency }),
    p.stock === 0 ? h('p', { className: 'text-xs text-red-600' }, 'Sold out')
      : h(AddToCart, { productId: p.id, max: p.stock }));
}

async function Reviews({ id }) {
  await ticks(4);
  const rs = [['Ana', 5, 'Light and comfortable, I use them every day.'],
    ['Ben', 4, 'Good grip on wet rocks; runs a little small.'],
    ['Chloé', 5, 'Third pair. Nothing else comes close.']];
  return h('section', { className: 'mt-8', 'aria-label': 'Reviews' },
    h('h2', { className: 'text-base font-semibold' }, 'Reviews (' + rs.length + ')'),
    h('ul', { className: 'divide-y' }, rs.map(([who, stars, text], i) =>
      h('li', { key: id + '-' + i, className: 'py-3' },
        h('p', { className: 'text-sm font-medium' }, who + ' — ' + '★'.repeat(stars)),
        h('p', { className: 'text-sm text-gray-600' }, text)))));
}

async function Recommendations() {
  await ticks(9);
  return h(Carousel, { title: 'You may also like', autoplay: false },
    products.slice(6).map((p) => h(ProductCard, { key: p.id, p })));
}

async function Inventory() {
  await ticks(6);
  throw new Error('inventory service timed out');
}

const DESCRIPTION = Array.from({ length: 14 }, (_, i) =>
  `Section ${i + 1}. Built on a lightweight foam midsole with a recycled mesh upper, ` +
  'the Trail Runner keeps its shape after hundreds of kilometres of mixed terrain.').join(' ');

function Page() {
  ReactDOM.preload('/img/hero.webp', { as: 'image', fetchPriority: 'high' });
  const p = products[0];
  return h('html', { lang: 'en' },
    h('head', null,
      h('meta', { charSet: 'utf-8' }),
      h('title', null, p.name + ' | Shop'),
      h('link', { rel: 'stylesheet', href: '/assets/app.4f1e.css', precedence: 'default' })),
    h('body', { className: 'min-h-screen bg-gray-50 text-gray-900 antialiased' },
      h(Header),
      h('main', { className: 'mx-auto max-w-7xl px-4 py-8' },
        h('div', { className: 'grid grid-cols-1 gap-8 md:grid-cols-2' },
          h('img', { src: '/img/hero.webp', alt: p.name, className: 'w-full rounded-xl' }),
          h('div', null,
            h('h1', { className: 'text-3xl font-bold tracking-tight' }, p.name),
            h(Price, { amount: p.price, currency: p.currency, large: true }),
            h(AddToCart, { productId: p.id, max: p.stock }),
            h(React.Suspense, { fallback: h('p', { className: 'text-sm text-gray-400' }, 'Checking stock…') },
              h(Inventory)),
            h('p', { className: 'mt-4 text-gray-700' }, DESCRIPTION))),
        h(React.Suspense, { fallback: h('p', null, 'Loading reviews…') }, h(Reviews, { id: p.id })),
        h('h2', { className: 'mt-10 text-xl font-semibold' }, 'Popular right now'),
        h('div', { className: 'mt-4 grid grid-cols-2 gap-4 md:grid-cols-3' },
          products.slice(0, 6).map((q) => h(ProductCard, { key: q.id, p: q }))),
        h(React.Suspense, { fallback: h('div', { className: 'h-64 animate-pulse rounded-lg bg-gray-100' }) },
          h(Recommendations))),
      h('footer', { className: 'border-t py-6 text-center text-xs text-gray-500' }, '© 2025 Shop Example')));
}

const { pipe } = server.renderToPipeableStream(h(Page), MANIFEST, {
  onError: () => 'shop-digest-1',
});
pipe(process.stdout);
