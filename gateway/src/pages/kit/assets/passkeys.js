// Gatehouse pages: the passkey buttons, the one part of the pages that needs JavaScript.
// Plain browser JavaScript, served as a file (the pages' CSP allows no inline script), on
// @simplewebauthn/browser's bundle loaded before it (the global SimpleWebAuthnBrowser).
//
// The server renders what this script works on, hidden until it runs:
//   [data-passkey-area]          shown here, where the browser can use passkeys
//   button[data-passkey]         "authenticate" or "register"; its form holds a hidden
//                                `response` field, filled with the browser's answer before
//                                the form is sent the ordinary way (CSRF token included)
//   form[data-options]           the WebAuthn options the server made for that form; without
//                                them an "authenticate" button asks for sign-in options
//   [data-passkey-status]        where a failure is said
// A page without these elements is left as it is.
(function () {
  'use strict';

  var webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;

  var OPTIONS_URL = '/api/v1/auth/login/passkey/options';

  var MESSAGES = {
    authenticate: {
      cancelled: 'The passkey was not used: it was cancelled or took too long. Try again.',
      failed: 'This browser could not use a passkey here. Try again, or use a code.',
    },
    register: {
      cancelled: 'No passkey was made: it was cancelled or took too long. Try again.',
      failed: 'This browser could not make a passkey here. Try again, or start over.',
    },
  };

  async function signInOptions() {
    var answer = await fetch(OPTIONS_URL, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (!answer.ok) throw new Error('passkey options: HTTP ' + answer.status);
    return (await answer.json()).options;
  }

  function say(form, text) {
    var status = form.querySelector('[data-passkey-status]');
    if (!status) return;
    status.textContent = text;
    status.hidden = !text;
  }

  async function ceremony(kind, form) {
    var given = form.getAttribute('data-options');
    if (kind === 'register') return webauthn.startRegistration({ optionsJSON: JSON.parse(given) });
    var options = given ? JSON.parse(given) : await signInOptions();
    return webauthn.startAuthentication({ optionsJSON: options });
  }

  async function run(button) {
    var form = button.form;
    var kind = button.getAttribute('data-passkey') === 'register' ? 'register' : 'authenticate';
    var field = form && form.querySelector('input[name="response"]');
    if (!field) return;
    // The form's other fields first (a password a change needs): the browser says what is missing.
    if (!form.reportValidity()) return;
    say(form, '');
    button.disabled = true;
    try {
      field.value = JSON.stringify(await ceremony(kind, form));
    } catch (error) {
      button.disabled = false;
      var name = error && (error.name === 'WebAuthnError' && error.cause ? error.cause.name : error.name);
      say(form, name === 'NotAllowedError' || name === 'AbortError' ? MESSAGES[kind].cancelled : MESSAGES[kind].failed);
      return;
    }
    form.submit();
  }

  function start() {
    document.querySelectorAll('[data-passkey-area]').forEach(function (area) {
      area.hidden = false;
    });
    document.querySelectorAll('button[data-passkey]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function (event) {
        event.preventDefault();
        run(button);
      });
      // Enter in the passkey's name field sends the form: make the passkey first.
      if (button.getAttribute('data-passkey') === 'register' && button.form) {
        button.form.addEventListener('submit', function (event) {
          event.preventDefault();
          run(button);
        });
      }
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
