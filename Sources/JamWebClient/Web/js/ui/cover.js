// Cover art when the track has some, else a placeholder with the title's initials.
import { h, setText } from './dom.js';
import { initials } from './format.js';

export function makeCover(size) {
  const img = h('img', { class: 'cover-img', alt: '', loading: 'lazy', hidden: true });
  const placeholder = h('span', { class: 'cover-placeholder', 'aria-hidden': 'true' });
  const box = h('span', { class: `cover cover-${size}` }, img, placeholder);
  img.addEventListener('error', () => {
    img.hidden = true;
    placeholder.hidden = false;
  });
  return box;
}

/** Points a cover made by makeCover at a track. */
export function updateCover(box, track) {
  const [img, placeholder] = box.children;
  const url = track && track.artworkURL;
  if (url) {
    if (img.getAttribute('src') !== url) {
      img.src = url;
      img.hidden = false;
      placeholder.hidden = true;
    }
  } else {
    img.removeAttribute('src');
    img.hidden = true;
    placeholder.hidden = false;
  }
  setText(placeholder, initials(track ? track.name : ''));
}
